import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { rewindSession } from '../../src/changes/rewind-session.js';
import { cliPath, jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { hashTree } from '../support/tree-hash.js';

/** SIGKILLs of a rewinding `rein rewind` per run (at least the 20; more with REWIND_KILLS). */
const kills = Math.max(20, Number(process.env.REWIND_KILLS) || 0);

/** A small deterministic generator (the moments of the kills are printed with the seed when a check fails). */
const seededRandom = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/**
 * Start `rein rewind` and SIGKILL it: `afterStart` ms after it said the rewind was recorded and files were about to
 * change (`{"phase":"started"}`), or (`afterStart` undefined) `sinceSpawn` ms after it started, wherever it was.
 */
const rewindAndKill = (args: string[], cwd: string, moment: { afterStart?: number; sinceSpawn: number }) =>
  new Promise<{ killedAt: 'started' | 'spawn' | 'not killed'; code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killedAt: 'started' | 'spawn' | 'not killed' = 'not killed';
    const kill = (at: 'started' | 'spawn') => {
      if (killedAt === 'not killed' && child.exitCode === null && child.kill('SIGKILL')) killedAt = at;
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (moment.afterStart !== undefined && stdout.includes('"phase":"started"')) setTimeout(() => kill('started'), moment.afterStart);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (moment.afterStart === undefined) setTimeout(() => kill('spawn'), moment.sinceSpawn);
    child.on('error', reject);
    child.on('close', (code) => resolve({ killedAt, code, stdout, stderr }));
  });

/** The target of the rewind the session's log started and never finished, if any. */
const pendingRewindOf = async (root: string, id: string): Promise<number | undefined> => {
  const store = await openLevelEventStore(join(root, '.rein'));
  try {
    const records = await store.read(id);
    const started = records.filter((record) => record.type === 'workspace.rewind-started').at(-1);
    if (!started || records.some((record) => record.type === 'workspace.changed' && record.cause === started.id)) return undefined;
    return (started.data as { toSeq: number }).toSeq;
  } finally {
    await store.close();
  }
};

const withoutStore = (tree: Record<string, string>) => Object.fromEntries(Object.entries(tree).filter(([path]) => !path.startsWith('.rein')));

describe('a rewind killed at random moments', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let id: string;
  let first: number;
  let last: number;
  const trees = new Map<number, Record<string, string>>();

  beforeAll(async () => {
    workspace = await makeTempDir('rein-rewind-crash-');
    // Two calls of bash: 400 files in 20 folders, then every one rewritten, a quarter removed and a folder renamed.
    const make = 'for d in $(seq 0 19); do mkdir -p many/d$d; for f in $(seq 0 19); do echo "first $d $f" > many/d$d/f$f.txt; done; done';
    const change = 'for d in $(seq 0 19); do for f in $(seq 0 19); do echo "second $d $f $RANDOM" > many/d$d/f$f.txt; done; rm many/d$d/f1*.txt; done; mv many/d3 many/moved; head -c 200000 /dev/urandom > many/blob.bin';
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Making.', toolCalls: [{ name: 'bash', arguments: { command: make } }] }, { text: 'Changing.', toolCalls: [{ name: 'bash', arguments: { command: change } }] }, { text: 'Done.' }] }));
    const run = await runCli(['run', 'make files', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path });
    expect(run.code, run.stderr).toBe(0);
    const records = jsonLines(run.stdout);
    id = records[0]!.stream as string;
    const settled = records.filter((record) => record.type === 'tool.settled');
    [first, last] = [settled[0]!.seq as number, settled[1]!.seq as number];
    trees.set(last, withoutStore(await hashTree(workspace.path)));
    const back = await runCli(['rewind', id, '--to', String(first), '--code', '--yes', '--json'], { cwd: workspace.path });
    expect(back.code, back.stderr).toBe(0);
    expect(jsonLines(back.stdout).at(-1)!.code).toMatchObject({ verified: true });
    trees.set(first, withoutStore(await hashTree(workspace.path)));
    expect(Object.keys(trees.get(first)!).length).toBe(422);
  });
  afterAll(() => workspace.remove());

  it(`is finished by the next command after each of ${kills} SIGKILLs, leaving exactly the target's tree`, async () => {
    const seed = Date.now() % 100_000;
    const random = seededRandom(seed);
    let interrupted = 0;
    let target = first;
    for (let kill = 0; kill < kills; kill++) {
      target = target === first ? last : first;
      // Half the kills land after the rewind is recorded (mid-write), half anywhere from the start of the process.
      const moment = kill % 2 === 0 || kill === kills - 1 ? { afterStart: Math.floor(random() * 40), sinceSpawn: 0 } : { sinceSpawn: 300 + Math.floor(random() * 900) };
      const killed = await rewindAndKill(['rewind', id, '--to', String(target), '--code', '--yes', '--json'], workspace.path, moment);
      const context = `seed ${seed}, kill ${kill} (${JSON.stringify(moment)}, ${killed.killedAt}): ${killed.stderr}`;
      if (killed.killedAt === 'not killed') expect(killed.code, context).toBe(0);
      const pending = await pendingRewindOf(workspace.path, id);
      if (pending !== undefined) interrupted++;
      // The next command: the last one through `rein resume` (the session ended: it finishes the rewind and stops),
      // the others through the library, as `rein rewind` does (it finishes the interrupted rewind, then its own).
      if (kill === kills - 1) {
        const resumed = await runCli(['resume', id], { cwd: workspace.path });
        expect(resumed.code, `${context}\n${resumed.stderr}`).toBe(0);
        if (pending !== undefined) expect(resumed.stdout, context).toContain(`finished an interrupted rewind of the workspace to #${pending}`);
      }
      const store = await openLevelEventStore(join(workspace.path, '.rein'));
      try {
        const result = await rewindSession(store, { root: workspace.path, never: [join(workspace.path, '.rein')] }, id, { to: target, code: true, force: false });
        expect(result.finished?.toSeq, context).toBe(kill === kills - 1 ? undefined : pending);
        expect(result.code?.plan.outside, context).toEqual([]);
        expect(result.code?.verified, context).toBe(true);
      } finally {
        await store.close();
      }
      expect(withoutStore(await hashTree(workspace.path)), context).toEqual(trees.get(target));
    }
    // Kills landed mid-rewind (printed with the count); the log still verifies.
    console.log(`rewind crash: ${interrupted} of ${kills} kills interrupted a rewind (seed ${seed})`);
    expect(interrupted).toBeGreaterThan(0);
    expect((await runCli(['replay', id], { cwd: workspace.path })).code).toBe(0);
  });

  it('a rewind stopped right after its record (before any file changed) is finished by rein resume, which says so', async () => {
    const now = JSON.stringify(withoutStore(await hashTree(workspace.path)));
    const target = now === JSON.stringify(trees.get(first)) ? last : first;
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      await rewindSession(store, { root: workspace.path, never: [join(workspace.path, '.rein')] }, id, {
        to: target,
        code: true,
        confirm: () => true,
        onStart: () => {
          throw new Error('stopped here');
        },
      }).then(
        () => expect.unreachable(),
        (error: Error) => expect(error.message).toBe('stopped here'),
      );
    } finally {
      await store.close();
    }
    const pending = await pendingRewindOf(workspace.path, id);
    expect(pending).toBeDefined();
    const resumed = await runCli(['resume', id], { cwd: workspace.path });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`finished an interrupted rewind of the workspace to #${pending} first`);
    expect(resumed.stdout).toContain('verified');
    expect(await pendingRewindOf(workspace.path, id)).toBeUndefined();
    expect(withoutStore(await hashTree(workspace.path))).toEqual(trees.get(pending!));
  });
});
