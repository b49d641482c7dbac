import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertRecordsMatchSchemas, createMemoryEventStore, runScriptedSession } from 'rein/testing';
import type { ToolSettled } from '../../models/tool.records.js';
import { ToolErrorCode } from '../../models/tool.records.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/** A valid call per tool: the seed hostile values are planted into. */
const seeds: Record<string, Record<string, unknown>> = {
  read: { path: 'a.txt', offset: 1, limit: 5 },
  write: { path: 'out.txt', content: 'hello' },
  edit: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' },
  edit_lines: { path: 'a.txt', ops: [{ op: 'replace_line', tag: '0123abcd', new_text: 'x' }] },
  list_dir: { path: '.' },
  glob: { pattern: '**/*.txt', path: '.' },
  grep: { pattern: 'alpha', path: '.', include: '*.txt', max_matches: 5 },
  read_artifact: { artifact: `artifact://blake3/${'0'.repeat(64)}`, offset: 1 },
  bash: { command: 'ls', timeout_ms: 1000, cwd: '.' },
  memory_read: { scope: 'repo', limit: 5 },
  memory_write: { content: 'alpha comes first', kind: 'project_fact' },
  delegate_task: { tasks: [{ id: 't1', role: 'explorer', objective: 'find alpha', context_mode: 'clean' }] },
};

const nested = (depth: number, leaf: unknown): unknown => {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { inner: value };
  return value;
};

/** What a hostile model sends: numbers JSON cannot carry, half a surrogate pair, NUL bytes, deep nesting, huge strings, wrong types. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, 1e309),
  fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\ud800', '\udfff', '\udbff')).map(([text, half]) => `${text}${half}.txt`),
  fc.string({ maxLength: 8 }).map((text) => `a\u0000${text}`),
  fc.integer({ min: 40, max: 2_000 }).map((depth) => nested(depth, 'leaf')),
  fc.integer({ min: 20_000, max: 200_000 }).map((length) => 'x'.repeat(length)),
  fc.anything({ maxDepth: 2 }),
);

const hostileCall = fc.constantFrom(...Object.keys(seeds)).chain((name) =>
  fc.record({
    name: fc.constant(name),
    plant: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...Object.keys(seeds[name]!)), fc.constantFrom('extra', '\ud800key')), hostile), { minLength: 1, maxLength: 3 }),
  }).map(({ plant }) => {
    const args: Record<string, unknown> = structuredClone(seeds[name]!);
    for (const [field, value] of plant) args[field] = value;
    return { name, arguments: args };
  }),
);

describe('hostile tool arguments, end to end', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-hostile-');
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\nbeta\n');
  });
  afterAll(() => workspace.remove());

  it('through every tool: only typed results, no uncaught exception, the session resumes and replays exactly', async () => {
    const store = createMemoryEventStore();
    await fc.assert(
      fc.asyncProperty(fc.array(hostileCall, { minLength: 1, maxLength: 3 }), async (calls) => {
        const run = await runScriptedSession({
          store,
          workspace: workspace.path,
          script: { turns: [{ text: 'Trying.', toolCalls: calls }, { text: 'Done.' }] },
          rein: { sandbox: { loginShell: false }, delegation: { maxFanOut: 2 } },
          // A person answers: no arbitrary command ever runs; every other call may.
          answer: (request) => ({ decision: request.tool === 'bash' ? 'deny' : 'allow-once' }),
        });
        expect(run.records.filter((record) => record.type === 'effect.failed')).toEqual([]);
        expect(run.result.status).toBe('completed');
        for (const record of run.records.filter((entry) => entry.type === 'tool.settled' && entry.actor === 'root')) {
          const settled = record.data as ToolSettled;
          if (settled.status === 'error') expect(ToolErrorCode.options).toContain(settled.errorCode);
        }
        const replay = await run.rein.replaySession(run.session.id);
        expect(replay.head).toBe(run.records.at(-1)!.seq);
        assertRecordsMatchSchemas(run.records);
        const resumed = await run.rein.resumeSession(run.session.id);
        expect(resumed.report.alreadyEnded).toBe(true);
      }),
      { numRuns: propertyRuns(40) },
    );
  });

  it('a glob pattern too long to compile is refused, not thrown where nothing catches it', async () => {
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Finding.', toolCalls: [{ name: 'glob', arguments: { pattern: 'x'.repeat(200_000) } }] }, { text: 'Done.' }] } });
    expect(run.result.status).toBe('completed');
    expect(run.records.find((record) => record.type === 'tool.settled')!.data).toMatchObject({ errorCode: 'InvalidInput', failedStage: 'schema' });
  });

  it('a value no log can hold is refused naming its field, and the recorded call is what the tools saw', async () => {
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a\ud800.txt', offset: Number.POSITIVE_INFINITY, limit: nested(100, 1) } }] }, { text: 'Done.' }] },
    });
    const settled = run.records.find((record) => record.type === 'tool.settled')!.data as ToolSettled;
    expect(settled).toMatchObject({ errorCode: 'InvalidInput', failedStage: 'schema' });
    expect(settled.observation).toContain('`path` holds a lone UTF-16 surrogate');
    expect(settled.observation).toContain('`offset` is not a finite number');
    expect(settled.observation).toMatch(/`limit(\.inner\[0\])+[^`]*` is nested deeper than 64 levels/);
    const responded = run.records.find((record) => record.type === 'model.responded')!.data as { toolCalls: Array<{ arguments: Record<string, unknown>; invalid: unknown[] }> };
    expect(responded.toolCalls[0]!.arguments).toMatchObject({ path: 'a\ufffd.txt', offset: null });
    expect(responded.toolCalls[0]!.invalid).toHaveLength(3);
    await run.rein.replaySession(run.session.id);
  });
});
