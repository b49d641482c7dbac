import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { requireBubblewrap } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';

const sandboxed = await requireBubblewrap();

/** A PATH with every program of the system's but bubblewrap: a machine where the sandbox is not available. */
const pathWithoutBubblewrap = async (directory: string): Promise<string> => {
  await mkdir(directory);
  for (const system of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(system)) continue;
    for (const name of readdirSync(system)) {
      if (name === 'bwrap' || existsSync(join(directory, name))) continue;
      await symlink(join(system, name), join(directory, name));
    }
  }
  return directory;
};

describe('resume keeps the sandbox a session ran under', () => {
  it.runIf(sandboxed)('a --sandbox required session resumed where bubblewrap is missing refuses its bash calls, and nothing leaks', async () => {
    const root = await makeTempDir('rein-resume-sandbox-');
    try {
      const real = await realpath(root.path);
      const workspace = join(real, 'ws');
      await mkdir(workspace);
      await mkdir(join(real, 'secret'));
      await writeFile(join(real, 'secret', 'key.txt'), 'TOPSECRET\n');
      await writeFile(join(workspace, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'write', arguments: { path: 'w.txt', content: 'x' } }] }, { text: '2', toolCalls: [{ name: 'bash', arguments: { command: `cat ${join(real, 'secret', 'key.txt')} > leaked.txt; echo done` } }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'write then read', '--script', 'script.json', '--sandbox', 'required'], { cwd: workspace });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const PATH = await pathWithoutBubblewrap(join(real, 'no-bwrap'));
      const resumed = await runInProcess(['resume', id, '--yes', '--json'], { cwd: workspace, env: { PATH } });
      const settled = resumed.stdout.split('\n').filter((line) => line.includes('"tool.settled"')).map((line) => JSON.parse(line) as { data: { name: string; status: string; errorCode?: string; observation: string } });
      const bash = settled.find((record) => record.data.name === 'bash');
      expect(bash?.data, resumed.stdout + resumed.stderr).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(bash!.data.observation).toContain('the sandbox mode is "required" but bubblewrap is not available');
      expect(existsSync(join(workspace, 'leaked.txt'))).toBe(false);
      const checked = resumed.stdout.split('\n').filter((line) => line.includes('"sandbox.checked"')).map((line) => JSON.parse(line) as { data: { mode: string } });
      expect(checked.at(-1)?.data.mode).toBe('required');
      expect(await readFile(join(real, 'secret', 'key.txt'), 'utf8')).toBe('TOPSECRET\n');
    } finally {
      await root.remove();
    }
  }, 120_000);

  it('a resume flag that changes the recorded sandbox says so before anything runs', async () => {
    const workspace = await makeTempDir('rein-resume-sandbox-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'write', arguments: { path: 'w.txt', content: 'x' } }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'write', '--script', 'script.json', '--network', 'allow-list', '--allow-host', 'localhost'], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const kept = await runInProcess(['resume', id, '--approve', 'write'], { cwd: workspace.path });
      expect(kept.stdout, kept.stdout + kept.stderr).toContain('network allow-list (localhost)');
      expect(kept.stdout).not.toContain('sandbox: network');
      const again = await runInProcess(['run', 'write', '--script', 'script.json', '--sandbox', 'required', '--max-processes', '64'], { cwd: workspace.path });
      const second = /session (s-[\w-]+):/.exec(again.stdout)![1]!;
      const changed = await runInProcess(['resume', second, '--approve', 'write', '--sandbox', 'off', '--max-processes', '128'], { cwd: workspace.path });
      expect(changed.stdout, changed.stdout + changed.stderr).toContain('sandbox: mode required → off (--sandbox)');
      // The limits it ran under are recorded and hold again; a flag that changes one says so.
      expect(changed.stdout).toContain('the process limit 64 → 128 (--max-processes)');
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
