import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../src/index.js';
import { replaySession } from '../../src/session/replay-session.js';
import type { HookDecided } from '../../models/hook.records.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A plugin directory with one read-only tool, `<id>__ping`, answering `pong from <id>`. */
const writePlugin = async (directory: string, id: string): Promise<void> => {
  await mkdir(directory, { recursive: true });
  const manifest = { id, name: id, version: '1.0.0', contributes: { tools: ['ping'] }, permissions: ['read'] };
  await writeFile(join(directory, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
  await writeFile(
    join(directory, 'index.mjs'),
    `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ tools: [{ name: 'ping', description: 'answers pong', parameters: { type: 'object', properties: {} }, risk: 'read', execute: async () => 'pong from ${id}' }] }) };\n`,
  );
};

describePostgres('a worker runs a queued session with the plugins and hooks rein run would load', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let home: { path: string; remove: () => Promise<void> };
  let outside: { path: string; remove: () => Promise<void> };
  let store: PostgresEventStore;
  let url: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-worker-plugins-');
    home = await makeTempDir('rein-worker-home-');
    outside = await makeTempDir('rein-worker-cli-plugin-');
    url = freshSchemaUrl();
    store = await openPostgresEventStore(url);
    await writePlugin(join(home.path, 'plugins', 'mine'), 'mine');
    await writePlugin(join(workspace.path, '.rein-plugins', 'proj'), 'proj');
    await writePlugin(outside.path, 'once');
    await writeFile(join(workspace.path, 'secret.txt'), 'hidden\n');
    await writeFile(join(workspace.path, 'notes.txt'), 'hello\n');
    // The command hook counts its runs and refuses reads of secret files with exit 2.
    const hook = join(workspace.path, 'guard.sh');
    await writeFile(hook, `#!/bin/sh\necho run >> ${join(home.path, 'hook-runs.log')}\nif grep -q secret; then echo 'secret files stay closed' >&2; exit 2; fi\n`);
    await chmod(hook, 0o755);
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: hook, sandbox: false }] }] } }));
    const calls = ['mine__ping', 'proj__ping', 'once__ping'].map((name) => ({ name, arguments: {} }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'go', toolCalls: [...calls, { name: 'read', arguments: { path: 'secret.txt' } }, { name: 'read', arguments: { path: 'notes.txt' } }] }, { text: 'done' }] }));
  });
  afterAll(async () => {
    await store.close();
    await workspace.remove();
    await home.remove();
    await outside.remove();
  });

  it('user, trusted project and --plugin plugins, and the command hook of rein.config.json once trusted, whose deny holds; the plugins stop on record', async () => {
    const env = { REIN_CONFIG_HOME: home.path };
    expect((await runInProcess(['plugins', 'trust', 'proj'], { cwd: workspace.path, env })).code).toBe(0);
    // The hooks of rein.config.json are not trusted yet: the worker does not load them, and says so.
    const untrusted = await runInProcess(['run', 'ping and read', '--script', 'script.json', '--store', url, '--detach', '--json', '--plugin', outside.path], { cwd: workspace.path, env });
    const untrustedId = String(jsonLines(untrusted.stdout)[0]!.sessionId);
    const before = await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: home.path, env });
    expect(jsonLines(before.stdout).filter((event) => event.sessionId === untrustedId).map((event) => [event.type, event.detail ?? null])).toEqual([
      ['claimed', null],
      ['warning', 'the command hooks of rein.config.json are not trusted: its 1 hook(s) (PreToolUse) were not loaded (trust them with `rein hooks trust` or --yes)'],
      ['finished', 'completed'],
    ]);
    expect((await store.read(untrustedId)).filter((record) => record.type === 'tool.settled').map((record) => (record.data as { status: string }).status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(existsSync(join(home.path, 'hook-runs.log'))).toBe(false);
    expect((await runInProcess(['hooks', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
    const queued = await runInProcess(['run', 'ping and read', '--script', 'script.json', '--store', url, '--detach', '--json', '--plugin', outside.path], { cwd: workspace.path, env });
    expect(queued.code).toBe(0);
    const { sessionId } = jsonLines(queued.stdout)[0]!;
    const worker = await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: home.path, env });
    expect(worker.code).toBe(0);
    expect(jsonLines(worker.stdout).filter((event) => event.sessionId === sessionId).map((event) => [event.type, event.detail ?? null])).toEqual([
      ['claimed', null],
      ['finished', 'completed'],
    ]);

    const records = await store.read(String(sessionId));
    const loaded = records.filter((record) => record.type === 'plugin.loaded').map((record) => [(record.data as { pluginId: string }).pluginId, (record.data as { source: string }).source]);
    expect(loaded).toEqual([['mine', 'user'], ['proj', 'project'], ['once', 'cli']]);
    const settled = records.filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; failedStage?: string; observation: string });
    expect(settled.map((result) => [result.name, result.status, result.failedStage ?? null])).toEqual([
      ['mine__ping', 'ok', null],
      ['proj__ping', 'ok', null],
      ['once__ping', 'ok', null],
      ['read', 'error', 'hook'],
      ['read', 'ok', null],
    ]);
    expect(settled[3]!.observation).toContain('secret files stay closed');
    const decided = records.filter((record) => record.type === 'hook.decided').map((record) => record.data as HookDecided);
    expect(decided.map((entry) => [entry.tool, entry.decision, entry.decidedBy ?? null])).toEqual([
      ['read', 'deny', 'command:PreToolUse#1'],
      ['read', 'none', null],
    ]);
    expect((await readFile(join(home.path, 'hook-runs.log'), 'utf8')).trim().split('\n')).toHaveLength(2);
    // The worker let go of the session after stopping its plugins, recorded under its lease: the last records.
    expect(records.slice(-3).map((record) => [record.type, (record.data as { pluginId: string }).pluginId])).toEqual([
      ['plugin.stopped', 'once'],
      ['plugin.stopped', 'proj'],
      ['plugin.stopped', 'mine'],
    ]);
    await expect(replaySession(store, String(sessionId))).resolves.toMatchObject({ verified: records.length });
  });
});
