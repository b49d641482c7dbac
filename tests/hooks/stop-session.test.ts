import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore, runScriptedSession, verifyRecords } from 'rein/testing';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { HookDecided } from '../../models/hook.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import type { CommandHooksConfig } from '../../src/hooks/command-hooks.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

const of = (records: readonly RecordEnvelope[], type: string) => flattenRecords(records).filter((record) => record.type === type);

/** A workspace with a hook script that logs each run to `runs.log` and then runs `body`. */
const setUp = async (body: string) => {
  const dir = await makeTempDir('rein-stop-session-');
  cleanup.push(dir.remove);
  await writeFile(join(dir.path, 'notes.txt'), 'hello\n');
  const hook = join(dir.path, 'hook.sh');
  await writeFile(hook, `#!/bin/sh\necho run >> ${join(dir.path, 'runs.log')}\n${body}\n`);
  await chmod(hook, 0o755);
  const runs = async () => (await readFile(join(dir.path, 'runs.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  return { workspace: dir.path, hook, runs };
};

const stopAnswer = `cat > /dev/null\necho '{"continue":false,"stopReason":"the release is frozen"}'`;

describe('a command hook answering continue: false stops the session', () => {
  it('at PreToolUse: the call is denied, nothing else runs, the session ends cancelled with the stop reason, on record', async () => {
    const { workspace, hook, runs } = await setUp(stopAnswer);
    const hooks: CommandHooksConfig = { PreToolUse: [{ matcher: 'write', hooks: [{ type: 'command', command: hook }] }] };
    const script = {
      turns: [
        { text: 'write it', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'x' } }] },
        { text: 'and more', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
        { text: 'done' },
      ],
    };
    const run = await runScriptedSession({ script, workspace, rein: { hooks, permissions: { mode: 'default', approveAll: true }, sandbox: { loginShell: false } } });
    expect(run.result).toMatchObject({ status: 'cancelled', reason: 'stopped by hook command:PreToolUse#1: the release is frozen' });
    const settled = of(run.records, 'tool.settled').map((record) => record.data as ToolSettled);
    expect(settled.map((result) => [result.name, result.errorCode, result.failedStage])).toEqual([['write', 'Denied', 'hook']]);
    expect(of(run.records, 'tool.started')).toHaveLength(0);
    await expect(readFile(join(workspace, 'out.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    // The model was asked once: the turn after the denial never started.
    expect(of(run.records, 'model.responded')).toHaveLength(1);
    const decided = of(run.records, 'hook.decided')[0]!.data as HookDecided;
    expect(decided).toMatchObject({ point: 'preToolUse', decision: 'deny', stopSession: { hookId: 'command:PreToolUse#1', reason: 'the release is frozen' }, hooks: [{ stopSession: 'the release is frozen' }] });
    expect(of(run.records, 'session.ended').at(-1)!.data).toMatchObject({ status: 'cancelled', reason: 'stopped by hook command:PreToolUse#1: the release is frozen' });
    expect(await runs()).toBe(1);
    // Replay reads the decision and the cancellation; no hook runs.
    expect(verifyRecords(run.session.id, run.records).verified).toBe(run.records.length);
    await run.rein.replaySession(run.session.id);
    expect(await runs()).toBe(1);
  });

  it('at PostToolUse: the call ran, its result is recorded, then the session stops', async () => {
    const { workspace, hook, runs } = await setUp(stopAnswer);
    const hooks: CommandHooksConfig = { PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: hook }] }] };
    const script = { turns: [{ text: 'read', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] }, { text: 'done' }] };
    const run = await runScriptedSession({ script, workspace, rein: { hooks } });
    expect(run.result).toMatchObject({ status: 'cancelled', reason: 'stopped by hook command:PostToolUse#1: the release is frozen' });
    expect((of(run.records, 'tool.settled')[0]!.data as ToolSettled).status).toBe('ok');
    expect(of(run.records, 'model.responded')).toHaveLength(1);
    expect(await runs()).toBe(1);
  });

  it('at UserPromptSubmit: the prompt never reaches the model and the session ends; at Stop it is only a stop', async () => {
    const { workspace, hook } = await setUp(stopAnswer);
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace, hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: hook }] }] }, provider: createScriptedProvider(parseScript({ turns: [{ text: 'never' }] })) });
    const session = await rein.createSession({ task: 'ship it' });
    await expect(session.send('ship it')).rejects.toMatchObject({ code: 'PROMPT_BLOCKED' });
    expect(await session.whenQuiet()).toMatchObject({ status: 'cancelled', reason: 'stopped by hook command:UserPromptSubmit#1: the release is frozen' });
    const records = await store.read(session.id);
    expect(of(records, 'user.message')).toHaveLength(0);
    expect(of(records, 'effect.requested')).toHaveLength(0);

    const stop = await runScriptedSession({ script: { turns: [{ text: 'all done' }] }, workspace, rein: { hooks: { Stop: [{ hooks: [{ type: 'command', command: hook }] }] } } });
    expect(stop.result.status).toBe('completed');
    expect(of(stop.records, 'hook.decided')[0]!.data).toMatchObject({ point: 'stop', decision: 'stop' });
    expect((of(stop.records, 'hook.decided')[0]!.data as HookDecided).stopSession).toBeUndefined();
  });

  it('resume of a session whose process died between the stop and the cancellation cancels it, running no hook', async () => {
    const { workspace, hook, runs } = await setUp(stopAnswer);
    const store = createMemoryEventStore();
    // The first process dies right before it can write the cancellation.
    const dying: EventStore = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'append') {
          return (stream: string, records: Array<{ type: string }>, options: Parameters<EventStore['append']>[2]) =>
            records.some((record) => record.type === 'session.cancelled') ? Promise.reject(new Error('the process died')) : target.append(stream, records as never, options);
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const options = { workspace, hooks: { PreToolUse: [{ hooks: [{ type: 'command' as const, command: hook }] }] }, provider: createScriptedProvider(parseScript({ turns: [{ text: 'read', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] }, { text: 'done' }] })) };
    const first = await createRein({ ...options, store: dying });
    const session = await first.startSession({ task: 'read the notes' });
    await expect(session.whenQuiet()).rejects.toThrow('the process died');
    expect(of(await store.read(session.id), 'session.ended')).toHaveLength(0);
    expect(await runs()).toBe(1);
    const second = await createRein({ ...options, store });
    const { session: resumed } = await second.resumeSession(session.id);
    expect(await resumed.whenQuiet()).toMatchObject({ status: 'cancelled', reason: 'stopped by hook command:PreToolUse#1: the release is frozen' });
    expect(await runs()).toBe(1);
    const records = await store.read(session.id);
    expect(of(records, 'tool.started')).toHaveLength(0);
    expect(verifyRecords(session.id, records).verified).toBe(records.length);
  });
});
