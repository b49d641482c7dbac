import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolErrorCode } from '../../models/tool.records.js';
import { fieldRenames } from '../../src/policy/input-repair.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/** A valid call per tool, the seed the near-miss generator mutates. */
const valid: Record<string, Record<string, unknown>> = {
  read: { path: 'a.txt', offset: 1, limit: 5 },
  write: { path: 'out.txt', content: 'hello' },
  edit: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA', replace_all: false },
  edit_lines: { path: 'a.txt', ops: [{ op: 'replace_line', tag: '0123abcd', new_text: 'x' }] },
  list_dir: { path: '.' },
  glob: { pattern: '**/*.txt', path: '.' },
  grep: { pattern: 'alpha', path: '.', include: '*.txt', max_matches: 5, case_insensitive: true },
  read_artifact: { artifact: `artifact://blake3/${'0'.repeat(64)}`, offset: 1 },
  bash: { command: 'ls', timeout_ms: 1000, description: 'list' },
  delegate_task: { tasks: [{ id: 't1', role: 'explorer', objective: 'find alpha', context_mode: 'clean', budgets: { max_turns: 2 } }], join: { policy: 'quorum', k: 1 } },
  memory_read: { scope: 'repo', kinds: ['project_fact'], limit: 5 },
  memory_write: { content: 'alpha comes first', kind: 'project_fact', scope: 'repo', topic: 'order', ttl_days: 30 },
};

const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** Near misses: the mistakes models make — camelCase names, stringly typed values, markdown links, missing, extra or mistyped fields. */
const nearMiss = (seed: Record<string, unknown>) =>
  fc
    .array(
      fc.tuple(
        fc.constantFrom('camel', 'stringify', 'drop', 'extra', 'null', 'number', 'array', 'autolink', 'filePath', 'cmd', 'empty'),
        fc.nat(),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((mutations) => {
      const args: Record<string, unknown> = structuredClone(seed);
      for (const [mutation, pick] of mutations) {
        const keys = Object.keys(args);
        const key = keys[pick % Math.max(1, keys.length)];
        if (key === undefined && mutation !== 'extra') continue;
        if (mutation === 'camel') {
          args[camel(key!)] = args[key!];
          if (camel(key!) !== key) delete args[key!];
        } else if (mutation === 'stringify') args[key!] = String(args[key!]);
        else if (mutation === 'drop') delete args[key!];
        else if (mutation === 'extra') args[`unexpected_${pick % 3}`] = 'x'.repeat(pick % 5000);
        else if (mutation === 'null') args[key!] = null;
        else if (mutation === 'number') args[key!] = pick;
        else if (mutation === 'array') args[key!] = [args[key!]];
        else if (mutation === 'autolink' && typeof args[key!] === 'string') args[key!] = `[${String(args[key!])}](${String(args[key!])})`;
        else if (mutation === 'filePath' && 'path' in args) {
          args.filePath = args.path;
          delete args.path;
        } else if (mutation === 'cmd' && 'command' in args) {
          args.cmd = args.command;
          delete args.command;
        } else if (mutation === 'empty') args[key!] = '';
      }
      return args;
    });

const isWhitelisted = (repair: Record<string, unknown>): boolean =>
  'from' in repair ? fieldRenames[String(repair.from)] === repair.to : ['string-to-boolean', 'string-to-integer', 'markdown-autolink', 'json-unescape'].includes(String(repair.kind));

describe('every tool under fuzzing', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  const executions: Array<{ tool: string; valid: boolean }> = [];

  beforeAll(async () => {
    dir = await makeTempDir('rein-fuzz-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\nbeta\n');
    await mkdir(join(dir.path, 'sub'));
    // Each tool is wrapped to record that it ran and whether its arguments were valid; bash only records (the
    // fuzzer must not run arbitrary commands).
    const tools: AnyToolDefinition[] = builtinTools().map((tool) => ({
      ...tool,
      execute: async (args: unknown, context: never, plan: never) => {
        executions.push({ tool: tool.name, valid: tool.parameters.safeParse(args).success });
        return tool.name === 'bash' ? { ok: true, output: '{}' } : tool.execute(args, context, plan);
      },
    }));
    harness = await toolHarness(dir.path, { tools });
    await harness.run('read', { path: 'a.txt' });
  });
  afterAll(() => dir.remove());

  const check = async (name: string, args: Record<string, unknown>) => {
    const before = executions.length;
    const before2 = harness.persisted.length;
    const outcome = await harness.call(name, args);
    const facts = [...harness.persisted.slice(before2), ...outcome.facts];
    if (outcome.kind === 'settled') {
      expect(['ok', 'error']).toContain(outcome.outcome.status);
      if (outcome.outcome.status === 'error') expect(ToolErrorCode.options).toContain(outcome.outcome.errorCode);
      expect(outcome.outcome.observation.length).toBeLessThanOrEqual(20_000);
    } else if (outcome.kind === 'ask') {
      expect(outcome.request.approvalId).toMatch(/^root\/approval-\d+$/);
    }
    for (const fact of facts.filter((entry) => entry.type === 'tool.repaired')) {
      for (const repair of (fact.data as { repairs: Array<Record<string, unknown>> }).repairs) expect(isWhitelisted(repair)).toBe(true);
    }
    // A call that started carries its validation folded into its `tool.started`.
    const validated = (facts.find((fact) => fact.type === 'tool.validated')?.data ?? (facts.some((fact) => fact.type === 'tool.started' && (fact.data as { validated?: unknown }).validated === true) ? { ok: true } : undefined)) as { ok: boolean } | undefined;
    if (!validated?.ok) expect(executions.length).toBe(before);
    for (const execution of executions.slice(before)) expect(execution).toEqual({ tool: name, valid: true });
    // An InvalidInput observation never quotes a large field in full.
    if (outcome.kind === 'settled' && outcome.outcome.errorCode === 'InvalidInput') expect(outcome.outcome.observation).not.toMatch(/x{200}/);
  };

  it('returns only typed results for near-miss arguments, never runs a tool with invalid ones, and repairs only from the whitelist', async () => {
    const tool = fc.constantFrom(...Object.keys(valid));
    await fc.assert(
      fc.asyncProperty(tool.chain((name) => fc.tuple(fc.constant(name), nearMiss(valid[name]!))), async ([name, args]) => check(name, args)),
      { numRuns: propertyRuns(300) },
    );
  });

  it('returns only typed results for arbitrary arguments and unknown tools', async () => {
    const name = fc.oneof(fc.constantFrom(...Object.keys(valid)), fc.string({ maxLength: 12 }));
    const args = fc.dictionary(fc.oneof(fc.constantFrom('path', 'filePath', 'content', 'command', 'cmd', 'pattern', 'ops', 'old_string', 'oldString', 'replaceAll'), fc.string({ maxLength: 8 })), fc.anything({ maxDepth: 2 }), { maxKeys: 5 });
    await fc.assert(fc.asyncProperty(name, args, async (tool, input) => check(tool, input)), { numRuns: propertyRuns(300) });
  });

  it('repairs a call that is only a whitelisted shape mistake, and runs it', async () => {
    await harness.run('read', { path: 'a.txt' });
    const result = await harness.run('edit', { filePath: 'a.txt', oldString: 'beta', newString: 'BETA', replaceAll: 'false' });
    expect(result.status).toBe('ok');
    expect(result.facts.find((fact) => fact.type === 'tool.repaired')?.data).toMatchObject({
      repairs: [{ from: 'filePath', to: 'path' }, { from: 'oldString', to: 'old_string' }, { from: 'newString', to: 'new_string' }, { from: 'replaceAll', to: 'replace_all' }, { field: 'replace_all', kind: 'string-to-boolean' }],
    });
  });

  it('does not repair while another problem remains, and reports the call as sent', async () => {
    const outcome = await harness.call('read', { filePath: 'a.txt', bogus: 1 });
    expect(outcome.kind === 'settled' && outcome.outcome.errorCode).toBe('InvalidInput');
    expect(outcome.facts.some((fact) => fact.type === 'tool.repaired')).toBe(false);
    expect(outcome.kind === 'settled' && outcome.outcome.observation).toContain('filePath');
  });
});
