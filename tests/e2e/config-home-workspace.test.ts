import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The trial's E34: with the home directory as the workspace, rein's own configuration folder (`~/.config/rein`: the
 * trust store and the user plugins) was model-writable, so the model installed a user plugin that the next run loaded
 * outside the sandbox. Those folders are protected whenever they lie inside the workspace; a workspace inside them is
 * refused.
 */
describe("rein's configuration folder inside the workspace", () => {
  let home: { path: string; remove: () => Promise<void> };
  // A user running rein in ~ with no REIN_CONFIG_HOME / XDG_CONFIG_HOME (empty counts as unset).
  const env = () => ({ HOME: home.path, REIN_CONFIG_HOME: '', XDG_CONFIG_HOME: '' });
  const plugin = '.config/rein/plugins/evil';

  beforeEach(async () => {
    home = await makeTempDir('rein-home-ws-');
  });
  afterEach(async () => {
    await home.remove();
  });

  it('the model can neither write nor plant a user plugin or trust in ~/.config/rein, and rein sandbox lists it', async () => {
    const marker = join(home.path, 'PWNED_USERPLUGIN');
    await writeFile(join(home.path, 'script.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'bash', arguments: { command: `mkdir -p ${plugin} && echo '{}' > .config/rein/trust.json; echo made` } }] },
      { text: '2', toolCalls: [{ name: 'write', arguments: { path: `${plugin}/rein-plugin.json`, content: JSON.stringify({ id: 'evil', name: 'evil', version: '1.0.0', main: 'index.mjs', defaultEnabled: true, contributes: {}, permissions: [] }) } }] },
      { text: '3', toolCalls: [{ name: 'write', arguments: { path: `${plugin}/index.mjs`, content: `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'ran'); export default { manifest: { id: 'evil', name: 'evil', version: '1.0.0', contributes: {}, permissions: [] }, setup: () => ({}) };\n` } }] },
      { text: 'Done.' },
    ] }));
    const run = await runInProcess(['run', 'w', '--script', 'script.json', '--yes', '--json'], { cwd: home.path, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
    expect(settled.filter((data) => data.name === 'write'), run.stdout).toEqual([expect.objectContaining({ status: 'error', errorCode: 'Denied' }), expect.objectContaining({ status: 'error', errorCode: 'Denied' })]);
    // What the command created inside rein's configuration folder was removed when it ended.
    expect(existsSync(join(home.path, '.config', 'rein'))).toBe(false);
    await writeFile(join(home.path, 'done.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const next = await runInProcess(['run', 'x', '--script', 'done.json', '--json'], { cwd: home.path, env: env() });
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);

    const sandbox = await runInProcess(['sandbox', '--json'], { cwd: home.path, env: env() });
    const report = JSON.parse(sandbox.stdout) as { protected: Array<{ path: string }> };
    expect(report.protected).toContainEqual({ path: join(await realpath(home.path), '.config', 'rein'), state: 'absent' });
  }, 120_000);

  it('an existing ~/.config/rein is masked: a command can neither add a plugin nor change the trust store', async () => {
    await mkdir(join(home.path, '.config', 'rein', 'plugins'), { recursive: true });
    await writeFile(join(home.path, '.config', 'rein', 'trust.json'), '{"version":1,"entries":[]}\n');
    await writeFile(join(home.path, 'script.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'bash', arguments: { command: 'cat .config/rein/trust.json; mkdir .config/rein/plugins/evil; echo status=$?' } }] },
      { text: 'Done.' },
    ] }));
    const run = await runInProcess(['run', 'w', '--script', 'script.json', '--yes', '--json'], { cwd: home.path, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(home.path, '.config', 'rein', 'plugins', 'evil'))).toBe(false);
    expect(await readFile(join(home.path, '.config', 'rein', 'trust.json'), 'utf8')).toBe('{"version":1,"entries":[]}\n');
  }, 120_000);

  it('a workspace inside rein\'s configuration folder is refused with USAGE', async () => {
    const inside = join(home.path, '.config', 'rein', 'plugins', 'mine');
    await mkdir(inside, { recursive: true });
    await writeFile(join(inside, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const run = await runInProcess(['run', 'x', '--script', 'script.json'], { cwd: inside, env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/rein: USAGE: the workspace .* lies inside rein's configuration folder/);
  }, 60_000);

  it('rein run at a terminal warns that the workspace is the home directory', async () => {
    await writeFile(join(home.path, 'done.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));
    const spec = { argv: [process.execPath, cliPath, 'run', 'x', '--script', 'done.json'], cwd: home.path, answers: [], timeout: 60 };
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify(spec)], { env: { ...process.env, ...env() } });
    const run = JSON.parse(stdout) as { code: number | null; output: string };
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('rein: warning: the workspace is your home directory');
  }, 60_000);
});
