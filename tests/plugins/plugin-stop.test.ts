import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryEventStore, runScriptedSession, verifyRecords } from 'rein/testing';
import { definePlugin } from '../../src/plugins/plugin-contract.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { makeTempDir } from '../support/temp-dir.js';
import { sessionEndedIn } from '../../src/host/step-record.js';

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

const workspace = async () => {
  const dir = await makeTempDir('rein-plugin-stop-');
  cleanup.push(dir.remove);
  await writeFile(join(dir.path, 'notes.txt'), 'hello\n');
  return dir.path;
};

/** A plugin with a tool and a `stop` that counts its calls (and fails when asked to). */
const pluginWith = (id: string, stops: string[], options: { failStop?: boolean } = {}) =>
  definePlugin({
    manifest: { id, name: id, version: '1.0.0', contributes: { tools: ['ping'] }, permissions: ['read'] },
    setup: () => ({
      tools: [{ name: 'ping', description: 'answers pong', parameters: z.object({}), risk: 'read', execute: async () => 'pong' }],
      stop: () => {
        stops.push(id);
        if (options.failStop) throw new Error('the connection would not close');
      },
    }),
  });

describe('plugins stop when their harness is done, and the logs say so', () => {
  it('stopPlugins calls each stop once (reverse load order) and appends plugin.stopped / plugin.failed to the ended session', async () => {
    const dir = await workspace();
    const stops: string[] = [];
    const run = await runScriptedSession({
      script: { turns: [{ text: 'ping', toolCalls: [{ name: 'kit__ping', arguments: {} }] }, { text: 'done' }] },
      workspace: dir,
      rein: { plugins: [pluginWith('kit', stops), pluginWith('flaky', stops, { failStop: true })] },
    });
    expect(run.result.status).toBe('completed');
    // While the harness lives, its plugins are ready: the ended session's log has no stop yet.
    expect((await run.store.read(run.session.id)).filter((record) => record.type.startsWith('plugin.')).map((record) => record.type)).toEqual(['plugin.loaded', 'plugin.ready', 'plugin.loaded', 'plugin.ready']);
    await run.rein.stopPlugins('the test is done');
    await run.rein.stopPlugins('again');
    expect(stops).toEqual(['flaky', 'kit']);
    const records = await run.store.read(run.session.id);
    const ended = records.findIndex((record) => sessionEndedIn(record) !== undefined);
    expect(records.slice(ended + 1).map((record) => [record.type, (record.data as { pluginId: string }).pluginId])).toEqual([
      ['plugin.failed', 'flaky'],
      ['plugin.stopped', 'kit'],
    ]);
    expect(records.at(-2)!.data).toMatchObject({ phase: 'stop', code: 'PLUGIN_STOP_FAILED', message: expect.stringContaining('would not close'), revoked: ['flaky__ping'] });
    expect(records.at(-1)!.data).toEqual({ pluginId: 'kit', reason: 'the test is done' });
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    expect(run.rein.plugins.list().map((plugin) => plugin.state)).toEqual(['stopped', 'failed']);
    expect(verifyRecords(run.session.id, records).verified).toBe(records.length);
    await expect(run.rein.replaySession(run.session.id)).resolves.toMatchObject({ verified: records.length });
  });

  it('close() leaves a session waiting for a person as it is (no interruption), records the plugins\' stop; resume loads the plugins again', async () => {
    const dir = await workspace();
    const stops: string[] = [];
    const store = createMemoryEventStore();
    const options = { store, workspace: dir, plugins: [pluginWith('kit', stops)], provider: createScriptedProvider(parseScript({ turns: [{ text: 'write', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'x' } }] }, { text: 'done' }] })) };
    const first = await createRein(options);
    const session = await first.startSession({ task: 'write a file' });
    expect((await session.whenQuiet()).status).toBe('paused');
    await first.close('shutting down');
    expect(stops).toEqual(['kit']);
    const records = await store.read(session.id);
    expect(records.at(-1)?.type).toBe('plugin.stopped');
    expect(records.map((record) => record.type)).not.toContain('session.interrupted');
    expect((await first.getSession(session.id))?.status).toBe('awaiting-approval');

    const second = await createRein(options);
    const { session: resumed } = await second.resumeSession(session.id);
    await resumed.approve(resumed.pendingApprovals()[0]!.approvalId, { decision: 'allow-once' });
    expect((await resumed.whenQuiet()).status).toBe('completed');
    await second.stopPlugins();
    const after = await store.read(session.id);
    expect(after.filter((record) => record.type === 'plugin.loaded' || record.type === 'plugin.stopped').map((record) => record.type)).toEqual(['plugin.loaded', 'plugin.stopped', 'plugin.loaded', 'plugin.stopped']);
    expect(verifyRecords(session.id, after).verified).toBe(after.length);

    // Resuming a session that had already ended writes nothing of this process's plugins, nor of their stop.
    const third = await createRein(options);
    const { report } = await third.resumeSession(session.id);
    expect(report.alreadyEnded).toBe(true);
    await third.stopPlugins();
    expect(await store.read(session.id)).toHaveLength(after.length);
  });
});

describe('after the harness stopped its plugins', () => {
  it("a stopped plugin's tool is refused unrun (ToolFailed the model reads), and the session goes on", async () => {
    const dir = await workspace();
    let pings = 0;
    const counting = definePlugin({
      manifest: { id: 'kit', name: 'kit', version: '1.0.0', contributes: { tools: ['ping'] }, permissions: ['read'] },
      setup: () => ({ tools: [{ name: 'ping', description: 'answers pong', parameters: z.object({}), risk: 'read', execute: async () => `pong ${++pings}` }] }),
    });
    const script = { turns: [{ text: 'ping', toolCalls: [{ name: 'kit__ping', arguments: {} }, { name: 'write', arguments: { path: 'out.txt', content: 'x' } }] }, { text: 'ping again', toolCalls: [{ name: 'kit__ping', arguments: {} }] }, { text: 'done' }] };
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: dir, plugins: [counting], provider: createScriptedProvider(parseScript(script)) });
    const session = await rein.startSession({ task: 'ping twice' });
    expect((await session.whenQuiet()).status).toBe('paused');
    expect(pings).toBe(1);
    await rein.stopPlugins('the host is done with them');
    await session.approve(session.pendingApprovals()[0]!.approvalId, { decision: 'allow-once' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(pings).toBe(1);
    const pingsSettled = (await store.read(session.id)).filter((record) => record.type === 'tool.settled' && (record.data as { name: string }).name === 'kit__ping').map((record) => record.data as { status: string; observation: string });
    expect(pingsSettled).toHaveLength(2);
    expect(pingsSettled[1]).toMatchObject({ status: 'error' });
    expect(pingsSettled[1]!.observation).not.toContain('pong');
  });
});
