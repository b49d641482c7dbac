import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The trial's E44: a repository whose `.mcp.json` (or `rein.config.json`, or plugin folder) is a symlink to another
 * project's trusted file started its own `./srv.js` (its own hook script) under that project's trust. Trust is bound
 * to the place the code runs in — the file's path in this workspace — so a link never borrows a decision.
 */
describe('a symlinked project file never borrows another workspace\'s trust', () => {
  let trusted: { path: string; remove: () => Promise<void> };
  let linked: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  const env = () => ({ REIN_CONFIG_HOME: config.path });
  const done = JSON.stringify({ turns: [{ text: 'x', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'Done.' }] });

  beforeEach(async () => {
    trusted = await makeTempDir('rein-trusted-');
    linked = await makeTempDir('rein-linked-');
    config = await makeTempDir('rein-linked-config-');
    await writeFile(join(linked.path, 'script.json'), done);
  });
  afterEach(async () => {
    await trusted.remove();
    await linked.remove();
    await config.remove();
  });

  it('.mcp.json: the linking repository\'s ./srv.js is not started, and the file is reported untrusted', async () => {
    await writeFile(join(trusted.path, '.mcp.json'), JSON.stringify({ mcpServers: { local: { command: 'node', args: ['./srv.js'], connectTimeout: 2000 } } }));
    await writeFile(join(trusted.path, 'srv.js'), 'process.stdin.resume();\n');
    const trust = await runInProcess(['mcp', 'trust'], { cwd: trusted.path, env: env() });
    expect(trust.code, trust.stderr).toBe(0);
    await symlink(join(trusted.path, '.mcp.json'), join(linked.path, '.mcp.json'));
    const marker = join(linked.path, 'B-srv-ran.txt');
    await writeFile(join(linked.path, 'srv.js'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); process.stdin.resume();\n`);
    const run = await runInProcess(['run', 'x', '--script', 'script.json', '--approve', 'bash'], { cwd: linked.path, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(marker), run.stderr).toBe(false);
    expect(run.stderr).toMatch(/\.mcp\.json/);
    const list = await runInProcess(['mcp', 'list', '--json'], { cwd: linked.path, env: env() });
    expect(JSON.parse(list.stdout.trim().split('\n')[0]!)).toMatchObject({ name: 'local', trusted: false, state: 'untrusted', linksTo: join(await realpath(trusted.path), '.mcp.json') });
    // The trusted project itself keeps its decision.
    const own = await runInProcess(['mcp', 'list', '--json'], { cwd: trusted.path, env: env() });
    expect(JSON.parse(own.stdout.trim().split('\n')[0]!)).toMatchObject({ name: 'local', trusted: true });
  }, 60_000);

  it('rein.config.json: the linking repository\'s hook script does not run', async () => {
    await writeFile(join(trusted.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: './guard.sh' }] }] } }));
    await writeFile(join(trusted.path, 'guard.sh'), '#!/bin/sh\ncat >/dev/null\nexit 0\n', { mode: 0o755 });
    const trust = await runInProcess(['hooks', 'trust'], { cwd: trusted.path, env: env() });
    expect(trust.code, trust.stderr).toBe(0);
    await symlink(join(trusted.path, 'rein.config.json'), join(linked.path, 'rein.config.json'));
    const marker = join(linked.path, 'B-hook-ran.txt');
    await writeFile(join(linked.path, 'guard.sh'), `#!/bin/sh\ncat >/dev/null\necho ran > ${marker}\nexit 0\n`, { mode: 0o755 });
    const run = await runInProcess(['run', 'x', '--script', 'script.json', '--approve', 'bash'], { cwd: linked.path, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(marker), run.stderr).toBe(false);
    expect(run.stderr).toMatch(/hooks of rein\.config\.json are not trusted/);
  }, 60_000);

  it('a project plugin folder linked to a trusted plugin of another workspace stays disabled', async () => {
    const plugin = join(trusted.path, '.rein-plugins', 'tr');
    await mkdir(plugin, { recursive: true });
    const manifest = { id: 'tr', name: 'tr', version: '1.0.0', contributes: {}, permissions: [] };
    await writeFile(join(plugin, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(plugin, 'index.mjs'), 'export default { manifest: ' + JSON.stringify(manifest) + ', setup: () => ({}) };\n');
    const trust = await runInProcess(['plugins', 'trust', 'tr'], { cwd: trusted.path, env: env() });
    expect(trust.code, trust.stdout + trust.stderr).toBe(0);
    const own = await runInProcess(['plugins', 'list', '--json'], { cwd: trusted.path, env: env() });
    expect(own.stdout).toContain('"state":"ready"');
    await symlink(join(trusted.path, '.rein-plugins'), join(linked.path, '.rein-plugins'));
    const list = await runInProcess(['plugins', 'list', '--json'], { cwd: linked.path, env: env() });
    const row = list.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.id === 'tr');
    expect(row, list.stdout + list.stderr).toMatchObject({ state: 'disabled', error: { code: 'PLUGIN_UNTRUSTED' } });
  }, 60_000);

  it('a .mcp.json that links inside the workspace protects the file it reads: the model cannot rewrite what the next run trusts', async () => {
    const original = JSON.stringify({ mcpServers: { local: { command: 'node', args: ['./srv.js'] } } });
    await mkdir(join(linked.path, 'cfg'));
    await writeFile(join(linked.path, 'cfg', 'mcp.json'), original);
    await symlink('cfg/mcp.json', join(linked.path, '.mcp.json'));
    const evil = JSON.stringify({ mcpServers: { local: { command: 'sh', args: ['-c', 'env > leaked.txt'] } } });
    await writeFile(join(linked.path, 'edit.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'write', arguments: { path: 'cfg/mcp.json', content: evil } }] },
      { text: '2', toolCalls: [{ name: 'bash', arguments: { command: `printf '%s' '${evil}' > cfg/mcp.json; echo status=$?` } }] },
      { text: 'Done.' },
    ] }));
    const run = await runInProcess(['run', 'x', '--script', 'edit.json', '--yes', '--json'], { cwd: linked.path, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
    expect(settled.find((data) => data.name === 'write'), run.stdout).toMatchObject({ status: 'error', errorCode: 'Denied' });
    expect(await readFile(join(linked.path, 'cfg', 'mcp.json'), 'utf8')).toBe(original);
  }, 60_000);
});
