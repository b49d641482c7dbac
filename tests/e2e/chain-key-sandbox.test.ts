import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { requireBubblewrap } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The chain key never reaches the model (issue 25 §2): a sandboxed command does not see rein's configuration folder
 * (the sandbox has an empty home of its own), and a key file that lies in the workspace (`REIN_CHAIN_KEY_FILE`) is a
 * protected path — hidden from commands, refused to file tools, listed by `rein sandbox`.
 */
describe('the chain key and the sandbox', () => {
  let home: { path: string; remove: () => Promise<void> };
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    home = await makeTempDir('rein-key-home-');
    workspace = await makeTempDir('rein-key-ws-');
  });
  afterEach(async () => {
    await workspace.remove();
    await home.remove();
  });

  const observations = (stdout: string): string => jsonLines(stdout).filter((record) => record.type === 'tool.settled').map((record) => JSON.stringify(record.data)).join('\n');

  it("a sandboxed command cannot read the key in rein's configuration folder", async (context) => {
    if (!(await requireBubblewrap())) return context.skip();
    const env = { HOME: home.path, REIN_CONFIG_HOME: '', XDG_CONFIG_HOME: '', REIN_CHAIN_KEY_FILE: '' };
    const key = join(home.path, '.config', 'rein', 'chain.key');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'bash', arguments: { command: `cat ${key} ~/.config/rein/chain.key; ls -a ~/.config 2>&1; echo status=$?` } }] },
      { text: 'Done.' },
    ] }));
    const run = await runInProcess(['run', 'look', '--script', 'script.json', '--yes', '--sandbox', 'required', '--json'], { cwd: workspace.path, env });
    expect(run.code, run.stderr).toBe(0);
    const secret = (await readFile(key, 'latin1')).trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const seen = observations(run.stdout);
    expect(seen).toContain('No such file or directory');
    expect(seen).not.toContain(secret);
    expect((await runInProcess(['verify', '--all'], { cwd: workspace.path, env })).code).toBe(0);
  }, 120_000);

  it('a key file in the workspace is a protected path: hidden from commands, refused to file tools, listed by rein sandbox', async (context) => {
    if (!(await requireBubblewrap())) return context.skip();
    const key = join(workspace.path, 'secrets', 'chain.key');
    const env = { HOME: home.path, REIN_CHAIN_KEY_FILE: key };
    await mkdir(join(workspace.path, 'secrets'));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'bash', arguments: { command: 'cat secrets/chain.key; echo status=$?' } }] },
      { text: '2', toolCalls: [{ name: 'read', arguments: { path: 'secrets/chain.key' } }] },
      { text: 'Done.' },
    ] }));
    const run = await runInProcess(['run', 'look', '--script', 'script.json', '--yes', '--sandbox', 'required', '--json'], { cwd: workspace.path, env });
    expect(run.code, run.stderr).toBe(0);
    const secret = (await readFile(key, 'latin1')).trim();
    const seen = observations(run.stdout);
    expect(seen).not.toContain(secret);
    const read = jsonLines(run.stdout).find((record) => record.type === 'tool.settled' && record.data.name === 'read');
    expect(read?.data).toMatchObject({ status: 'error', errorCode: 'Denied' });
    const sandbox = JSON.parse((await runInProcess(['sandbox', '--json'], { cwd: workspace.path, env })).stdout) as { protected: Array<{ path: string; state: string }> };
    expect(sandbox.protected).toContainEqual({ path: join(await realpath(workspace.path), 'secrets', 'chain.key'), state: 'masked' });
  }, 120_000);
});
