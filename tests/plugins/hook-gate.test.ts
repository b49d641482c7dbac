import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runScriptedSession, verifyRecords } from 'rein/testing';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { HookDecided } from '../../models/hook.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import { definePlugin } from '../../src/plugins/plugin-contract.js';
import type { PermissionsConfig } from '../../src/policy/permission-policy.js';
import { validReport } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { everythingServer } from '../support/mcp-servers.js';
import { flattenRecords } from '../../src/host/step-record.js';

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

const workspace = async () => {
  const dir = await makeTempDir('rein-hook-gate-');
  cleanup.push(dir.remove);
  await writeFile(join(dir.path, 'secret.txt'), 'top secret\n');
  await writeFile(join(dir.path, 'open.txt'), 'hello\n');
  return dir.path;
};

const of = (records: readonly RecordEnvelope[], type: string) => flattenRecords(records).filter((record) => record.type === type);
const settled = (records: readonly RecordEnvelope[]) => of(records, 'tool.settled').map((record) => ({ actor: record.actor, ...(record.data as ToolSettled) }));

/** A policy plugin: no agent may touch secret.txt, whatever tool, mode or agent. */
const guard = definePlugin({
  manifest: { id: 'policy', name: 'Policy', version: '1.0.0', contributes: { hooks: ['preToolUse'] } },
  setup: () => ({
    hooks: [
      {
        id: 'no-secrets',
        point: 'preToolUse',
        run: (input) => (JSON.stringify(input.tool.input).includes('secret') ? { decision: 'deny', reason: 'secret.txt is off limits' } : { decision: 'allow' }),
      },
    ],
  }),
});

const denyScript = {
  turns: [
    {
      text: 'Reading in parallel.',
      toolCalls: [
        { name: 'read', arguments: { path: 'secret.txt' } },
        { name: 'read', arguments: { path: 'secret.txt', offset: 1 } },
        { name: 'read', arguments: { path: 'open.txt' } },
        { name: 'list_dir', arguments: { path: 'secret.txt' } },
      ],
    },
    { text: 'Now a write and a child.', toolCalls: [{ name: 'write', arguments: { path: 'secret.txt', content: 'pwned' } }, { name: 'delegate_task', arguments: { tasks: [{ id: 'look', role: 'explorer', objective: 'look at the files' }] } }] },
    { text: 'Done, some calls were denied.' },
  ],
  agents: {
    explorer: { turns: [{ text: 'child reads', toolCalls: [{ name: 'read', arguments: { path: 'secret.txt' } }] }, { text: 'reporting', toolCalls: [{ name: 'submit_report', arguments: validReport('finding-report', 'completed') }] }] },
  },
};

const modes: Array<[string, PermissionsConfig]> = [
  ['default', { mode: 'default' }],
  ['accept-edits', { mode: 'accept-edits' }],
  ['--yes', { mode: 'default', approveAll: true }],
];

/** The same policy as a command hook (a real shell script): exit 2 with the reason on stderr. */
const commandGuard = async (dir: string) => {
  const path = join(dir, 'guard.sh');
  await writeFile(path, `#!/bin/sh\nif grep -q secret; then echo 'secret.txt is off limits' >&2; exit 2; fi\n`);
  await chmod(path, 0o755);
  return { hooks: { PreToolUse: [{ hooks: [{ type: 'command' as const, command: path }] }] } };
};

const gates: Array<[string, string, (dir: string) => Promise<Record<string, unknown>>]> = [
  ['a plugin hook', 'policy:no-secrets', async () => ({ plugins: [guard] })],
  ['a command hook', 'command:PreToolUse#1', commandGuard],
];

describe('the preToolUse gate', () => {
  for (const [label, permissions] of modes) for (const [kind, hookId, gate] of gates) {
    it(`${kind} denies a built-in call, each call of a parallel batch and a child's call in ${label} mode; none executes and the session completes`, async () => {
      const dir = await workspace();
      const run = await runScriptedSession({ script: denyScript, workspace: dir, rein: { ...(await gate(dir)), permissions, sandbox: { loginShell: false } }, answer: () => ({ decision: 'allow-once' }) });
      expect(run.result.status).toBe('completed');
      const results = settled(run.records);
      const secret = results.filter((result) => result.name !== 'delegate_task' && result.name !== 'submit_report' && result.observation.includes('secret.txt is off limits'));
      // Three root reads/lists of secret.txt, the root's write, and the child's read: every one denied by the hook.
      expect(secret.map((result) => [result.actor, result.name, result.errorCode, result.failedStage])).toEqual([
        ['root', 'read', 'Denied', 'hook'],
        ['root', 'read', 'Denied', 'hook'],
        ['root', 'list_dir', 'Denied', 'hook'],
        ['root', 'write', 'Denied', 'hook'],
        [expect.stringMatching(/^root\/delegation-\d+\/look$/), 'read', 'Denied', 'hook'],
      ]);
      const started = of(run.records, 'tool.started').map((record) => record.data as { callId: string });
      for (const result of secret) expect(started.some((start) => start.callId === result.callId)).toBe(false);
      expect(await readFile(join(dir, 'secret.txt'), 'utf8')).toBe('top secret\n');
      // The allowed read ran; the hook's decisions are on record, one per call.
      expect(results.find((result) => result.observation.includes('hello'))?.status).toBe('ok');
      const decided = of(run.records, 'hook.decided').map((record) => record.data as HookDecided);
      expect(decided.filter((entry) => entry.decision === 'deny')).toHaveLength(5);
      expect(decided.every((entry) => entry.point === 'preToolUse' && entry.hooks[0]!.hookId === hookId)).toBe(true);
      // No approval was asked for a denied call.
      expect(of(run.records, 'approval.requested').map((record) => (record.data as { tool: string }).tool)).not.toContain('write');
      expect(verifyRecords(run.session.id, run.records).verified).toBeGreaterThan(0);
    });
  }

  it('amends an input: the amended call is validated again, runs, and the log holds the original and the amended input', async () => {
    const dir = await workspace();
    const redirect = definePlugin({
      manifest: { id: 'redirect', name: 'Redirect', version: '1.0.0', contributes: { hooks: ['preToolUse'] } },
      setup: () => ({ hooks: [{ id: 'to-open', point: 'preToolUse', matcher: 'read', run: (input) => (input.tool.input.path === 'secret.txt' ? { decision: 'amend', input: { path: 'open.txt' }, reason: 'read the public file instead' } : undefined) }] }),
    });
    const run = await runScriptedSession({ script: { turns: [{ text: 'read', toolCalls: [{ name: 'read', arguments: { path: 'secret.txt' } }] }, { text: 'ok' }] }, workspace: dir, rein: { plugins: [redirect] } });
    expect(run.result.status).toBe('completed');
    expect(settled(run.records)[0]!.observation).toContain('hello');
    expect(of(run.records, 'hook.decided')[0]!.data).toMatchObject({ decision: 'amend', original: { path: 'secret.txt' }, amended: { path: 'open.txt' }, reason: 'read the public file instead' });
  });

  it('an ask from a hook asks a person even where permission allows; their answer lets it run once', async () => {
    const dir = await workspace();
    const asker = definePlugin({ manifest: { id: 'asker', name: 'Asker', version: '1.0.0', contributes: { hooks: ['preToolUse'] } }, setup: () => ({ hooks: [{ id: 'ask-reads', point: 'preToolUse', run: () => ({ decision: 'ask', reason: 'reads are audited' }) }] }) });
    const run = await runScriptedSession({ script: { turns: [{ text: 'read', toolCalls: [{ name: 'read', arguments: { path: 'open.txt' } }] }, { text: 'ok' }] }, workspace: dir, rein: { plugins: [asker] }, answer: () => ({ decision: 'allow-once' }) });
    expect(run.result.status).toBe('completed');
    expect(of(run.records, 'approval.requested')[0]!.data).toMatchObject({ tool: 'read', reason: expect.stringContaining('reads are audited') });
    expect(settled(run.records)[0]!.status).toBe('ok');
  });

  it('a plugin tool goes through the same pipeline, and its handler throwing is an observation, not a session failure', async () => {
    const dir = await workspace();
    const tools = definePlugin({
      manifest: { id: 'kit', name: 'Kit', version: '1.0.0', contributes: { tools: ['shout', 'explode'] }, permissions: ['read'] },
      setup: () => ({
        tools: [
          { name: 'shout', description: 'upper-case text', parameters: z.object({ text: z.string() }).strict(), risk: 'read', execute: async (input) => String(input.text).toUpperCase() },
          { name: 'explode', description: 'always fails', parameters: { type: 'object', properties: {} }, risk: 'read', execute: async () => { throw new Error('boom'); } },
        ],
      }),
    });
    const script = { turns: [{ text: 'go', toolCalls: [{ name: 'kit__shout', arguments: { text: 'hi' } }, { name: 'kit__shout', arguments: { text: 'secret' } }, { name: 'kit__explode', arguments: {} }] }, { text: 'done' }] };
    const run = await runScriptedSession({ script, workspace: dir, rein: { plugins: [tools, guard] } });
    expect(run.result.status).toBe('completed');
    expect(settled(run.records).map((result) => [result.name, result.status, result.errorCode ?? null, result.provenance?.route ?? null])).toEqual([
      ['kit__shout', 'ok', null, 'plugin:kit@1.0.0'],
      ['kit__shout', 'error', 'Denied', null],
      ['kit__explode', 'error', 'ToolFailed', 'plugin:kit@1.0.0'],
    ]);
    expect(of(run.records, 'plugin.ready').map((record) => (record.data as { pluginId: string }).pluginId)).toEqual(['kit', 'policy']);
  });
});

describe('an MCP call meets the same gate', () => {
  it('preToolUse denies an MCP call before it reaches the server (server-everything over stdio), allows another, and the guardrails judge it like any tool', async () => {
    const dir = await workspace();
    const classified = definePlugin({
      manifest: { id: 'classified', name: 'Classified', version: '1.0.0', contributes: { guardrails: ['input', 'output'] } },
      setup: () => ({
        guardrails: [
          { id: 'inputs', stage: 'input', check: () => ({ verdict: 'pass' }) },
          { id: 'stamp', stage: 'output', check: (input) => ({ verdict: input.result.observation.includes('CLASSIFIED') ? 'block' : 'pass', reason: 'classified content' }) },
        ],
      }),
    });
    const script = {
      turns: [
        {
          text: 'Echoing.',
          toolCalls: [
            { name: 'mcp__everything__echo', arguments: { message: 'the secret plan' } },
            { name: 'mcp__everything__echo', arguments: { message: 'hello' } },
            { name: 'mcp__everything__echo', arguments: { message: 'CLASSIFIED memo' } },
          ],
        },
        { text: 'Done.' },
      ],
    };
    const run = await runScriptedSession({ script, workspace: dir, rein: { plugins: [guard, classified], mcpServers: { everything: everythingServer() }, skills: false, permissions: { mode: 'default', approveAll: true } }, answer: () => ({ decision: 'allow-once' }) });
    expect(run.result.status).toBe('completed');
    const results = settled(run.records).filter((result) => result.name === 'mcp__everything__echo');
    expect(results.map((result) => [result.status, result.errorCode ?? null, result.failedStage ?? null])).toEqual([
      ['error', 'Denied', 'hook'],
      ['ok', null, null],
      ['error', 'Denied', null],
    ]);
    expect(results[0]!.observation).toContain('secret.txt is off limits');
    // The denied call never started; the allowed one reached the server and came back through the output guardrail.
    const started = of(run.records, 'tool.started').map((record) => record.data as { callId: string });
    expect(started.some((start) => start.callId === results[0]!.callId)).toBe(false);
    expect(results[1]!.observation).toContain('hello');
    expect(results[1]).toMatchObject({ guardrails: [{ stage: 'input', verdict: 'pass' }, { stage: 'output', verdict: 'pass' }] });
    expect(results[2]).toMatchObject({ guardrails: [{ stage: 'input', verdict: 'pass' }, { stage: 'output', verdict: 'block', by: 'classified:stamp' }] });
    expect(results[2]!.observation).not.toContain('CLASSIFIED memo');
    // One preToolUse decision per MCP call, in order.
    const decided = of(run.records, 'hook.decided').map((record) => record.data as HookDecided).filter((entry) => entry.point === 'preToolUse');
    expect(decided.map((entry) => entry.decision)).toEqual(['deny', 'allow', 'allow']);
    expect(verifyRecords(run.session.id, run.records).verified).toBeGreaterThan(0);
  });
});

describe('command hooks in a session', () => {
  it('deny by exit 2, context from PostToolUse, a Stop hook that always continues (bounded), and replay never runs a hook', async () => {
    const dir = await workspace();
    const counter = join(dir, 'runs.log');
    const hook = async (name: string, body: string) => {
      const path = join(dir, name);
      await writeFile(path, `#!/bin/sh\necho ${name} >> ${counter}\n${body}\n`);
      await chmod(path, 0o755);
      return path;
    };
    const pre = await hook('pre.sh', `if grep -q secret; then echo 'no secrets' >&2; exit 2; fi`);
    const post = await hook('post.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run the tests"}}'`);
    const stop = await hook('stop.sh', `echo '{"decision":"block","reason":"not yet: check again"}'`);
    const hooks = { PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command' as const, command: pre }] }], PostToolUse: [{ hooks: [{ type: 'command' as const, command: post }] }], Stop: [{ hooks: [{ type: 'command' as const, command: stop }] }] };
    const script = { turns: [{ text: 'read both', toolCalls: [{ name: 'read', arguments: { path: 'secret.txt' } }, { name: 'read', arguments: { path: 'open.txt' } }] }, { text: 'done 1' }, { text: 'done 2' }, { text: 'done 3' }, { text: 'done 4' }] };
    const run = await runScriptedSession({ script, workspace: dir, rein: { hooks } });
    expect(run.result.status).toBe('completed');
    const results = settled(run.records);
    expect(results.map((result) => [result.status, result.failedStage ?? null])).toEqual([['error', 'hook'], ['ok', null]]);
    expect(results[0]!.observation).toContain('no secrets');
    // Three continuations; the hook is asked about the fourth final reply too, and its objection ends the session
    // as a caveat of the completion, not a bare `completed`.
    const replies = of(run.records, 'model.responded').map((record) => (record.data as { continuation?: { reason: string } }).continuation?.reason ?? null);
    expect(replies).toEqual([null, 'not yet: check again', 'not yet: check again', 'not yet: check again', 'not yet: check again']);
    expect(of(run.records, 'session.ended')[0]!.data).toMatchObject({ status: 'completed', caveats: [{ kind: 'stop_hook_objected', detail: 'not yet: check again' }] });
    const runs = (await readFile(counter, 'utf8')).trim().split('\n');
    expect(runs.filter((line) => line === 'stop.sh')).toHaveLength(4);
    // The PostToolUse context reaches the model with the result, as untrusted data.
    const projected = of(run.records, 'context.projected')[1]!.data as { input: string };
    const input = Buffer.from(await run.store.readBlob(run.session.id, projected.input)).toString('utf8');
    expect(input).toContain('<hook-context');
    expect(input).toContain('remember to run the tests');
    // Replay reads the recorded decisions: no hook process runs.
    await run.rein.replaySession(run.session.id);
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toEqual(runs);
  });
});

describe('a command hook past its timeout in a session', () => {
  it('denies the call (fail closed), records the timeout on the hook row, and the session goes on to complete', async () => {
    const dir = await workspace();
    const sleepy = join(dir, 'sleepy.sh');
    await writeFile(sleepy, '#!/bin/sh\nsleep 30\n');
    await chmod(sleepy, 0o755);
    const script = { turns: [{ text: 'read', toolCalls: [{ name: 'read', arguments: { path: 'open.txt' } }] }, { text: 'done anyway' }] };
    const run = await runScriptedSession({ script, workspace: dir, rein: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: sleepy, timeout: 0.3 }] }] } } });
    expect(run.result.status).toBe('completed');
    expect(settled(run.records).map((result) => [result.name, result.errorCode, result.failedStage])).toEqual([['read', 'Denied', 'hook']]);
    expect(of(run.records, 'tool.started')).toHaveLength(0);
    const decided = of(run.records, 'hook.decided')[0]!.data as HookDecided;
    expect(decided).toMatchObject({ point: 'preToolUse', decision: 'deny', hooks: [{ hookId: 'command:PreToolUse#1', verdict: 'deny', error: { kind: 'timeout' } }] });
    expect(decided.reason).toContain('failing closed');
  });
});

describe('resume never runs a recorded hook again', () => {
  it('a call in doubt reruns with its recorded preToolUse decision; sessionStart does not run again; replay runs nothing', async () => {
    const dir = await workspace();
    const counter = join(dir, 'runs.log');
    const script = async (name: string) => {
      const path = join(dir, name);
      await writeFile(path, `#!/bin/sh\necho ${name} >> ${counter}\n`);
      await chmod(path, 0o755);
      return path;
    };
    const hooks = { PreToolUse: [{ hooks: [{ type: 'command' as const, command: await script('pre.sh') }] }], SessionStart: [{ hooks: [{ type: 'command' as const, command: await script('start.sh') }] }] };
    let attempts = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = definePlugin({
      manifest: { id: 'slow', name: 'Slow', version: '1.0.0', contributes: { tools: ['apply'] }, permissions: ['write'] },
      setup: () => ({
        tools: [
          {
            name: 'apply',
            description: 'applies a change slowly',
            parameters: z.object({ change: z.string() }),
            risk: 'write',
            execute: async (_input, context) => {
              attempts++;
              if (attempts > 1) return 'applied';
              started();
              await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
              return 'aborted';
            },
          },
        ],
      }),
    });
    const store = (await import('rein/testing')).createMemoryEventStore();
    const { createRein } = await import('../../src/rein.js');
    const { createScriptedProvider, parseScript } = await import('../../src/providers/scripted-provider.js');
    const options = { store, workspace: dir, hooks, plugins: [slow], permissions: { mode: 'default' as const, approveAll: true }, provider: createScriptedProvider(parseScript({ turns: [{ text: 'apply', toolCalls: [{ name: 'slow__apply', arguments: { change: 'x' } }] }, { text: 'done' }] })) };
    const first = await createRein(options);
    const session = await first.startSession({ task: 'apply the change' });
    await running;
    await session.interrupt('the process goes away');
    await session.whenQuiet();
    const before = (await readFile(counter, 'utf8')).trim().split('\n');
    expect(before).toEqual(['start.sh', 'pre.sh']);
    const second = await createRein(options);
    const { session: resumed, report } = await second.resumeSession(session.id, { confirmInDoubt: true });
    expect(report.resolutions.map((resolution) => resolution.resolution)).toEqual(['rerun']);
    expect((await resumed.whenQuiet()).status).toBe('completed');
    expect(attempts).toBe(2);
    // The rerun used the recorded decision: no hook process ran on resume.
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toEqual(before);
    await second.replaySession(session.id);
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toEqual(before);
    const records = await store.read(session.id);
    expect(of(records, 'hook.decided').map((record) => (record.data as HookDecided).point)).toEqual(['sessionStart', 'preToolUse']);
  });
});

describe('guardrails and the other points in a session', () => {
  it('a blocking output guardrail keeps a result from the model; a pre-flight block refuses a whole turn; both on record', async () => {
    const dir = await workspace();
    const guards = definePlugin({
      manifest: { id: 'guards', name: 'Guards', version: '1.0.0', contributes: { guardrails: ['pre_flight', 'input', 'output'] } },
      setup: () => ({
        guardrails: [
          { id: 'fanout', stage: 'pre_flight', check: (input) => ({ verdict: input.toolCalls.length > 2 ? 'block' : 'pass', reason: 'at most two calls per turn' }) },
          { id: 'inputs', stage: 'input', check: () => ({ verdict: 'pass' }) },
          { id: 'secrets', stage: 'output', check: (input) => ({ verdict: input.result.observation.includes('top secret') ? 'block' : 'pass', reason: 'classified content' }) },
        ],
      }),
    });
    const script = {
      turns: [
        { text: 'three', toolCalls: [{ name: 'read', arguments: { path: 'open.txt' } }, { name: 'read', arguments: { path: 'open.txt' } }, { name: 'read', arguments: { path: 'open.txt' } }] },
        { text: 'two', toolCalls: [{ name: 'read', arguments: { path: 'secret.txt' } }, { name: 'read', arguments: { path: 'open.txt' } }] },
        { text: 'done' },
      ],
    };
    const run = await runScriptedSession({ script, workspace: dir, rein: { plugins: [guards] } });
    expect(run.result.status).toBe('completed');
    const results = settled(run.records);
    expect(results.slice(0, 3).map((result) => result.failedStage)).toEqual(['pre-flight', 'pre-flight', 'pre-flight']);
    expect(of(run.records, 'tool.started')).toHaveLength(2);
    expect(results[3]).toMatchObject({ status: 'error', errorCode: 'Denied', guardrails: [{ stage: 'input', verdict: 'pass' }, { stage: 'output', verdict: 'block', by: 'guards:secrets' }] });
    expect(results[3]!.observation).not.toContain('top secret');
    expect(results[4]).toMatchObject({ status: 'ok', guardrails: [{ stage: 'input', verdict: 'pass' }, { stage: 'output', verdict: 'pass' }] });
    // The withheld text never reached a model input.
    for (const projected of of(run.records, 'context.projected')) {
      const input = Buffer.from(await run.store.readBlob(run.session.id, (projected.data as { input: string }).input)).toString('utf8');
      expect(input).not.toContain('top secret');
    }
    // Both turns met the configured stages in order: the second reached MutationReady.
    expect(of(run.records, 'turn.mutation-ready')).toHaveLength(2);
    expect(of(run.records, 'model.responded').map((record) => (record.data as { preFlight?: { verdict: string } }).preFlight?.verdict ?? null)).toEqual(['block', 'pass', null]);
  });

  it('userPromptSubmit blocks a message (nothing reaches the model), sessionStart and contextProject add untrusted context, observers record the end', async () => {
    const dir = await workspace();
    const seen: string[] = [];
    const points = definePlugin({
      manifest: { id: 'points', name: 'Points', version: '1.0.0', contributes: { hooks: ['userPromptSubmit', 'sessionStart', 'contextProject', 'sessionEnd'] } },
      setup: () => ({
        hooks: [
          { id: 'no-deploys', point: 'userPromptSubmit', run: (input) => (input.prompt.includes('deploy') ? { decision: 'block', reason: 'deploys are frozen' } : undefined) },
          { id: 'welcome', point: 'sessionStart', run: () => ({ additionalContext: 'The build uses pnpm.' }) },
          { id: 'notes', point: 'contextProject', run: () => ({ candidates: [{ id: 'style', priority: 2, content: 'Prefer small commits.' }, { id: 'huge', priority: 1, content: 'x'.repeat(40_000) }] }) },
          { id: 'bye', point: 'sessionEnd', run: (input) => void seen.push(input.status) },
        ],
      }),
    });
    const { createRein } = await import('../../src/rein.js');
    const { createScriptedProvider, parseScript } = await import('../../src/providers/scripted-provider.js');
    const store = (await import('rein/testing')).createMemoryEventStore();
    const rein = await createRein({ store, workspace: dir, plugins: [points], provider: createScriptedProvider(parseScript({ turns: [{ text: 'ok' }] })) });
    const session = await rein.createSession({ task: 'deploy now' });
    await expect(session.send('deploy now')).rejects.toMatchObject({ code: 'PROMPT_BLOCKED' });
    await session.send('tidy up');
    const result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    const records = await store.read(session.id);
    expect(of(records, 'user.message').map((record) => (record.data as { text: string }).text)).toEqual(['tidy up']);
    expect(of(records, 'hook.decided').map((record) => [(record.data as HookDecided).point, (record.data as HookDecided).decision])).toEqual([
      ['sessionStart', 'none'],
      ['userPromptSubmit', 'block'],
      ['userPromptSubmit', 'none'],
      ['contextProject', 'none'],
      ['sessionEnd', 'none'],
    ]);
    expect(seen).toEqual(['completed']);
    // The ledger keeps its decisions on hook candidates (the rest is rebuilt from the log).
    const projected = of(records, 'context.projected')[0]!.data as { input: string; included: Array<{ source: string; refs: string[] }>; excluded: Array<{ source: string; refs: string[]; reason: string }> };
    const input = Buffer.from(await store.readBlob(session.id, projected.input)).toString('utf8');
    expect(input).toContain('The build uses pnpm.');
    expect(input).toContain('Prefer small commits.');
    expect(projected.included.filter((entry) => entry.source === 'hooks').map((entry) => entry.refs)).toEqual([['hook:points:notes/style']]);
    expect(projected.excluded.filter((entry) => entry.source === 'hooks').map((entry) => [entry.refs[0], entry.reason])).toEqual([['hook:points:notes/huge', 'budget']]);
  });
});
