import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
let home: { path: string; remove: () => Promise<void> };

const manifest = { id: 'guard', name: 'Guard', version: '1.0.0', contributes: { tools: ['shout'], hooks: ['preToolUse'], commands: ['hello'], providers: ['fixed'] }, permissions: ['read', 'model'] };
const rein = fileURLToPath(new URL('../../dist/src/index.js', import.meta.url));

/** A project plugin on disk: a tool, a hook that denies reads of secret.txt (when DENY is set), and a command. */
const pluginModule = `import { createScriptedProvider, parseScript } from ${JSON.stringify(rein)};
export default {
  manifest: ${JSON.stringify(manifest)},
  setup: () => ({
    tools: [{ name: 'shout', description: 'upper-case text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, risk: 'read', execute: async (input) => String(input.text).toUpperCase() }],
    hooks: [{ id: 'secrets', point: 'preToolUse', run: (input) => (process.env.DENY && JSON.stringify(input.tool.input).includes('secret') ? { decision: 'deny', reason: 'secret files stay closed' } : undefined) }],
    providers: [{ id: 'fixed', create: () => createScriptedProvider(parseScript({ turns: [{ text: 'answered by the plugin provider' }] })) }],
    commands: [{ name: 'hello', description: 'say hello', run: (args, context) => { context.write('hello ' + args.join(' ') + '\\n'); return 0; } }],
  }),
};
`;

const env = () => ({ REIN_CONFIG_HOME: home.path, DENY: '' });

beforeAll(async () => {
  workspace = await makeTempDir('rein-plugins-cli-');
  home = await makeTempDir('rein-plugins-home-');
  await mkdir(join(workspace.path, '.rein-plugins', 'guard'), { recursive: true });
  await writeFile(join(workspace.path, '.rein-plugins', 'guard', 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
  await writeFile(join(workspace.path, '.rein-plugins', 'guard', 'index.mjs'), pluginModule);
  await writeFile(join(workspace.path, 'secret.txt'), 'hidden\n');
  await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'go', toolCalls: [{ name: 'guard__shout', arguments: { text: 'hi' } }, { name: 'read', arguments: { path: 'secret.txt' } }] }, { text: 'done' }] }));
});

afterAll(async () => {
  await workspace.remove();
  await home.remove();
});

describe('rein plugins and plugin commands', () => {
  it('lists an untrusted project plugin as disabled, trusts it, then lists it ready with its contributions', async () => {
    const before = await runInProcess(['plugins', 'list', '--json'], { cwd: workspace.path, env: env() });
    expect(before.code).toBe(0);
    expect(jsonLines(before.stdout)).toEqual([expect.objectContaining({ type: 'plugin', id: 'guard', state: 'disabled', source: 'project', error: expect.objectContaining({ code: 'PLUGIN_UNTRUSTED' }) })]);
    const trusted = await runInProcess(['plugins', 'trust', 'guard'], { cwd: workspace.path, env: env() });
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain('trusted guard');
    const after = await runInProcess(['plugins', 'list', '--json'], { cwd: workspace.path, env: env() });
    expect(jsonLines(after.stdout)).toEqual([
      expect.objectContaining({ type: 'plugin', id: 'guard', state: 'ready', version: '1.0.0', contributions: ['guard__shout', 'guard__fixed', 'guard:secrets', 'guard hello'] }),
      { type: 'hook', id: 'guard:secrets', point: 'preToolUse', kind: 'plugin', order: 0, timeoutMs: 1000, failOpen: false, state: 'loaded' },
    ]);
    const command = await runInProcess(['guard', 'hello', 'world'], { cwd: workspace.path, env: env() });
    expect(command).toMatchObject({ code: 0, stdout: 'hello world\n' });
    const unknown = await runInProcess(['nothing', 'here'], { cwd: workspace.path, env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('guard hello');
  });

  it('runs a session with the plugin: its tool, its hook on the boundary chain of rein trace, and replay --dry-run re-evaluating it', async () => {
    const run = await runInProcess(['run', 'shout and read', '--script', 'script.json', '--json'], { cwd: workspace.path, env: { ...env(), DENY: '1' } });
    expect(run.code).toBe(0);
    const records = jsonLines(run.stdout);
    const sessionId = String(records[0]!.stream);
    const settled = records.filter((record) => record.type === 'tool.settled').map((record) => [record.data.name, record.data.status, record.data.failedStage ?? null]);
    expect(settled).toEqual([['guard__shout', 'ok', null], ['read', 'error', 'hook']]);
    // The plugin stopped when the run was done, after the session ended: the last record, printed with the rest.
    expect(records.filter((record) => record.type.startsWith('plugin.')).map((record) => record.type)).toEqual(['plugin.loaded', 'plugin.ready', 'plugin.stopped']);
    expect(records.at(-1)).toMatchObject({ type: 'plugin.stopped', data: { pluginId: 'guard', reason: 'rein run finished' } });
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    const trace = await runInProcess(['trace', sessionId], { cwd: workspace.path, env: env() });
    expect(trace.code).toBe(0);
    expect(trace.stdout).toMatch(/read\(secret\.txt\) #\d+ → hook preToolUse deny \(secret files stay closed\) #\d+/);
    // Today the hook allows (DENY unset): the dry run says so, and runs nothing.
    const dry = await runInProcess(['replay', sessionId, '--dry-run'], { cwd: workspace.path, env: env() });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('CHANGED: hook: deny then, none now');
  });

  it('runs a session on a provider a plugin contributes (--provider <plugin>__<id>)', async () => {
    const run = await runInProcess(['run', 'say something', '--provider', 'guard__fixed', '--json'], { cwd: workspace.path, env: env() });
    expect(run.code).toBe(0);
    const records = jsonLines(run.stdout);
    expect(records.find((record) => record.type === 'model.responded')?.data.text).toBe('answered by the plugin provider');
    const missing = await runInProcess(['run', 'x', '--provider', 'guard__nothing'], { cwd: workspace.path, env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('guard__fixed');
  });
});
