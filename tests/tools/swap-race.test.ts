import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { eventually, requireBubblewrap } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();
const secret = 'TOP-SECRET-SWAPPED';
const outsideName = 'outside-only-name';

/**
 * A separate process flips `flip` between a real directory of the workspace and a symlink to a directory outside,
 * as fast as it can (both states held about as long), and counts the flips in `flips`.
 */
const flipper = `
const { lstatSync, renameSync, writeFileSync } = require('node:fs');
const [workspace, counter] = process.argv.slice(1);
const at = (name) => workspace + '/' + name;
let flips = 0;
let failures = 0;
const hold = () => { for (let index = 0; index < 200; index++); };
for (;;) {
  try {
    renameSync(at('flip.real'), at('flip')); hold(); renameSync(at('flip'), at('flip.real'));
    renameSync(at('flip.link'), at('flip')); hold(); renameSync(at('flip'), at('flip.link'));
    if (++flips % 50 === 0) { writeFileSync(counter + '.next', String(flips)); renameSync(counter + '.next', counter); }
  } catch (error) {
    // Put a half-done flip back, whichever state it stopped in.
    try { renameSync(at('flip'), at(lstatSync(at('flip')).isSymbolicLink() ? 'flip.link' : 'flip.real')); } catch {}
    if (++failures % 100 === 0) writeFileSync(counter + '.errors', String(failures) + ' ' + error.message);
  }
}
`;

describe('a directory swapped for a symlink thousands of times while the tools run', () => {
  let root: { path: string; remove: () => Promise<void> };
  let workspace: string;
  let outside: string;
  let harness: ToolHarness;
  let child: ChildProcess;

  beforeAll(async () => {
    root = await makeTempDir('rein-swap-');
    workspace = join(root.path, 'ws');
    outside = join(root.path, 'outside');
    await mkdir(join(workspace, 'flip.real'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(workspace, 'flip.real', 'inside.txt'), 'needle INSIDE\n');
    await writeFile(join(outside, 'inside.txt'), `needle ${secret}\n`);
    await writeFile(join(outside, `${outsideName}.txt`), `needle ${secret}\n`);
    await symlink(outside, join(workspace, 'flip.link'));
    harness = await toolHarness(workspace);
    child = spawn(process.execPath, ['-e', flipper, workspace, join(root.path, 'flips')], { stdio: 'ignore' });
  });
  afterAll(async () => {
    child.kill('SIGKILL');
    await root.remove();
  });

  const flips = async () => Number(await readFile(join(root.path, 'flips'), 'utf8').catch(() => '0'));
  const outsideNames = async () => (await readdir(outside)).sort();

  it('never shows outside content or names, and never leaves a file outside', async () => {
    const before = await outsideNames();
    const calls: Array<[string, Record<string, unknown>]> = [
      ['list_dir', { path: 'flip' }],
      ['glob', { pattern: '**/*', path: 'flip' }],
      ['glob', { pattern: 'flip/**' }],
      ['read', { path: 'flip/inside.txt' }],
      ['write', { path: 'flip/new.txt', content: 'written\n' }],
      ...(sandboxed ? ([['grep', { pattern: 'needle', path: 'flip' }], ['grep', { pattern: 'needle' }]] as Array<[string, Record<string, unknown>]>) : []),
    ];
    const counts = new Map<string, { ok: number; refused: number }>();
    // Start once the flipper runs (a loaded machine can take a while to start a process), then keep calling until
    // thousands of flips happened during the calls.
    expect(await eventually(flips, (count) => count >= 50, 60_000)).toBeGreaterThanOrEqual(50);
    const startFlips = await flips();
    for (let round = 0; round < 60 || ((await flips()) - startFlips < 2_000 && round < 1_000); round++) {
      for (const [tool, args] of calls) {
        const result = await harness.run(tool, args);
        const count = counts.get(tool) ?? { ok: 0, refused: 0 };
        if (result.status === 'ok') count.ok++;
        else count.refused++;
        counts.set(tool, count);
        expect(result.observation, `${tool} round ${round}`).not.toContain(secret);
        expect(result.observation, `${tool} round ${round}`).not.toContain(outsideName);
      }
    }
    expect(await outsideNames()).toEqual(before);
    // The race really ran: thousands of flips during the calls, and the tools saw both states.
    expect((await flips()) - startFlips).toBeGreaterThanOrEqual(2_000);
    // Both outcomes happened: the tools met the directory and the symlink (a refusal is the safe answer to a swap).
    const totals = [...counts.values()].reduce((sum, count) => ({ ok: sum.ok + count.ok, refused: sum.refused + count.refused }), { ok: 0, refused: 0 });
    expect(totals.ok, JSON.stringify([...counts])).toBeGreaterThan(0);
    expect(totals.refused, JSON.stringify([...counts])).toBeGreaterThan(0);
  });
});
