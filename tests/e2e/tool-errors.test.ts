import { execFile } from 'node:child_process';
import { chmod, chown, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const run = promisify(execFile);

/** `rein <args>` as an unprivileged user: as root, file modes do not stop a write, so root runs it as `nobody`. */
const asUnprivileged = async (args: string[], options: { cwd: string; home: string }) => {
  const command = [process.execPath, cliPath, ...args];
  // rein's config home (where the chain key is made) is the unprivileged user's too, inside the home it owns.
  const configHome = join(options.home, '.config', 'rein');
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'nobody', '--', 'env', `HOME=${options.home}`, `REIN_CONFIG_HOME=${configHome}`, `REIN_CHAIN_KEY_FILE=${join(configHome, 'chain.key')}`, ...command]] : [command[0]!, command.slice(1)];
  try {
    const { stdout, stderr } = await run(file, argv, { cwd: options.cwd, env: { ...process.env, HOME: options.home, REIN_CONFIG_HOME: configHome, REIN_CHAIN_KEY_FILE: join(configHome, 'chain.key') } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
};

describe('tool errors from the operating system at the command line', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let store: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-os-errors-cli-');
    store = await makeTempDir('rein-os-errors-store-');
  });
  afterEach(async () => {
    await workspace.remove();
    await store.remove();
  });

  it('a write the user may not make is a Denied result the model reads (EACCES), and the session goes on to complete', async () => {
    const script = { turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'notes.txt', content: 'new\n' } }] }, { text: 'I may not write there; nothing changed.' }] };
    await writeFile(join(workspace.path, 'notes.txt'), 'old\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    // The workspace is readable but not writable by the user rein runs as; the store is theirs.
    await chmod(workspace.path, 0o555);
    await chmod(join(workspace.path, 'script.json'), 0o644);
    if (process.getuid?.() === 0) await chown(store.path, 65534, 65534);
    const result = await asUnprivileged(['run', 'update the notes', '--script', 'script.json', '--store', store.path, '--yes'], { cwd: workspace.path, home: store.path });
    await chmod(workspace.path, 0o755);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✗ write notes.txt Denied');
    const id = /session (s-[\w-]+):/.exec(result.stdout)![1]!;
    const records = jsonLines((await asUnprivileged(['show', id, '--store', store.path, '--json'], { cwd: workspace.path, home: store.path })).stdout);
    const settled = entriesOfRows(records).find((record) => record.type === 'tool.settled')!.data;
    expect(settled).toMatchObject({ status: 'error', errorCode: 'Denied' });
    expect(settled.observation).toMatch(/^Denied: permission denied \(EACCES: open /);
    expect(entriesOfRows(records).some((record) => record.type === 'effect.failed')).toBe(false);
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
    expect(await readFile(join(workspace.path, 'notes.txt'), 'utf8')).toBe('old\n');
  });

  it('a NUL byte in a bash command is an InvalidInput result naming the field; nothing runs', async () => {
    const script = { turns: [{ text: 'Listing.', toolCalls: [{ name: 'bash', arguments: { command: 'ls\u0000 -la' } }] }, { text: 'That command was malformed.' }] };
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const result = await runInProcess(['run', 'list', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path, env: { HOME: workspace.path } });
    expect(result.code).toBe(0);
    const records = jsonLines(result.stdout);
    expect(entriesOfRows(records).find((record) => record.type === 'tool.settled')!.data).toMatchObject({ errorCode: 'InvalidInput', failedStage: 'runtime-validation', observation: expect.stringContaining('`command` contains a NUL byte') });
    expect(entriesOfRows(records).some((record) => record.type === 'tool.started')).toBe(false);
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
  });
});
