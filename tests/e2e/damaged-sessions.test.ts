import { readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { damageStreamLog, tamperStreamBlob } from '../support/damage.js';
import { openLevelEventStore } from '../../stores/index.js';
import { hashTree } from '../support/tree-hash.js';

describe('the store never hides damage', () => {
  it('rein sessions with a truncated MANIFEST (and a lost CURRENT) among the sessions lists the healthy ones and flags the damaged (exit 0)', async () => {
    const workspace = await makeTempDir('rein-damaged-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Hello.' }] }));
      const ids: string[] = [];
      for (const task of ['first', 'second', 'third', 'fourth']) {
        const result = await runInProcess(['run', task, '--script', 'script.json', '--json'], { cwd: workspace.path });
        expect(result.code).toBe(0);
        ids.push(jsonLines(result.stdout)[0]!.stream as string);
      }
      const [first, second, third, fourth] = ids as [string, string, string, string];
      const streams = join(workspace.path, '.rein', 'streams');
      const manifest = (await readdir(join(streams, second))).find((name) => name.startsWith('MANIFEST-'))!;
      await truncate(join(streams, second, manifest), 10);
      await rm(join(streams, fourth, 'CURRENT'));

      const listed = await runInProcess(['sessions', '--json'], { cwd: workspace.path });
      expect(listed.code).toBe(0);
      const sessions = jsonLines(listed.stdout);
      // The healthy ones first, in the order they ran; then the damaged ones (nothing readable orders them but their ids,
      // and two runs in the same second have ids in no particular order).
      expect(sessions.slice(0, 2).map((session) => [session.id, session.status])).toEqual([[first, 'completed'], [third, 'completed']]);
      expect(sessions.slice(2).map((session) => [session.id, session.status]).sort()).toEqual([[second, 'damaged'], [fourth, 'damaged']].sort());
      for (const damaged of sessions.slice(2)) expect(damaged.damaged).toMatchObject({ code: 'STORE_CORRUPT_RECORD' });

      const text = await runInProcess(['sessions'], { cwd: workspace.path });
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`${second}  damaged: STORE_CORRUPT_RECORD`);
      expect(text.stdout).toContain(`${fourth}  damaged: STORE_CORRUPT_RECORD`);
      expect(text.stdout).toContain(first);

      const shown = await runInProcess(['show', second], { cwd: workspace.path });
      expect(shown.code).toBe(1);
      expect(shown.stderr).toContain('rein: STORE_CORRUPT_RECORD');
    } finally {
      await workspace.remove();
    }
  });

  it('a damaged LevelDB table block is STORE_CORRUPT_RECORD in sessions, show and replay, never a raw LEVEL_CORRUPTION (trial 6 F8)', async () => {
    const workspace = await makeTempDir('rein-damaged-table-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Hello. '.repeat(300) }] }));
      const run = await runInProcess(['run', 'hi', '--script', 'script.json', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const id = jsonLines(run.stdout)[0]!.stream as string;
      // Opening the stream in place once moves its log into a table file (the trial's 000005.ldb).
      const again = await runInProcess(['resume', id, '--yes'], { cwd: workspace.path });
      expect(again.code, again.stderr).toBe(0);
      const directory = join(workspace.path, '.rein', 'streams', id);
      const tables = (await readdir(directory)).filter((name) => name.endsWith('.ldb'));
      expect(tables.length).toBeGreaterThan(0);
      for (const table of tables) {
        const bytes = await readFile(join(directory, table));
        for (let index = 64; index < bytes.length - 64; index += 7) bytes[index] = bytes[index]! ^ 0x5a;
        await writeFile(join(directory, table), bytes);
      }
      const listed = await runInProcess(['sessions'], { cwd: workspace.path });
      expect(listed.stdout).toContain(`${id}  damaged: STORE_CORRUPT_RECORD`);
      for (const command of ['show', 'replay']) {
        const refused = await runInProcess([command, id], { cwd: workspace.path });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('rein: STORE_CORRUPT_RECORD');
        expect(refused.stderr).not.toMatch(/rein: LEVEL_/);
      }
    } finally {
      await workspace.remove();
    }
  });

  it('rein sessions, show and replay leave a stream with a damaged .log byte-identical (no recovery in place) and list it on one line', async () => {
    const workspace = await makeTempDir('rein-damaged-log-');
    try {
      // Enough recorded text that the session's LevelDB .log spans several 32 KiB blocks.
      const turns = Array.from({ length: 6 }, (_, index) => ({ text: `part ${index} ${'lorem ipsum '.repeat(1200)}` }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'a healthy one' }] }));
      await writeFile(join(workspace.path, 'long.json'), JSON.stringify({ turns: [...turns.map((turn) => ({ ...turn, toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] })), { text: 'Done.' }] }));
      const healthy = jsonLines((await runInProcess(['run', 'healthy', '--script', 'script.json', '--json'], { cwd: workspace.path })).stdout)[0]!.stream as string;
      const made = await runInProcess(['run', 'long', '--script', 'long.json', '--json'], { cwd: workspace.path });
      expect(made.code, made.stderr).toBe(0);
      const damaged = jsonLines(made.stdout)[0]!.stream as string;
      const directory = join(workspace.path, '.rein', 'streams', damaged);
      // The trial's damage: 40 bytes XORed in the middle of the log.
      const log = await damageStreamLog(directory);
      const before = await hashTree(join(workspace.path, '.rein'));

      const listed = await runInProcess(['sessions'], { cwd: workspace.path });
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toContain(healthy);
      expect(lines[1]).toMatch(new RegExp(`^${damaged}  damaged: STORE_CORRUPT_RECORD `));
      const json = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
      expect(json.map((session) => [session.id, session.status])).toEqual([[healthy, 'completed'], [damaged, 'damaged']]);
      // Resume and fork refuse too, before LevelDB's recovery could drop what follows the damage in place; every
      // refusal is one line naming the damaged log, never a throwaway copy's path.
      for (const args of [['show', damaged], ['replay', damaged], ['trace', damaged], ['resume', damaged, '--yes'], ['fork', damaged, '--at', '4']]) {
        const refused = await runInProcess(args, { cwd: workspace.path });
        expect(refused.code, args.join(' ')).toBe(1);
        expect(refused.stderr).toContain('STORE_CORRUPT_RECORD');
        expect(refused.stderr).toContain(log);
        expect(refused.stderr).not.toMatch(/rein-stream-copy|\/dev\/shm/);
        expect(refused.stderr.trimEnd().split('\n'), refused.stderr).toHaveLength(1);
        expect(await hashTree(join(workspace.path, '.rein')), args.join(' ')).toEqual(before);
      }
      expect((await runInProcess(['show', healthy], { cwd: workspace.path })).code).toBe(0);
      expect(await hashTree(join(workspace.path, '.rein'))).toEqual(before);
      // Still damaged, still whole: a second listing says the same.
      expect((await runInProcess(['sessions'], { cwd: workspace.path })).stdout).toContain(`${damaged}  damaged: STORE_CORRUPT_RECORD`);
    } finally {
      await workspace.remove();
    }
  });

  it('rein resume of an ended recorded-provider session needs no provider: its damaged source session is never read', async () => {
    const workspace = await makeTempDir('rein-ended-recorded-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Hello.' }] }));
      const source = await runInProcess(['run', 'first', '--script', 'script.json', '--json'], { cwd: workspace.path });
      const sourceId = jsonLines(source.stdout)[0]!.stream as string;
      const rerun = await runInProcess(['run', '--provider', 'recorded', '--from', sourceId, '--json'], { cwd: workspace.path });
      expect(rerun.code, rerun.stderr).toBe(0);
      const rerunId = jsonLines(rerun.stdout)[0]!.stream as string;
      await rm(join(workspace.path, '.rein', 'streams', sourceId, 'CURRENT'));

      const resumed = await runInProcess(['resume', rerunId], { cwd: workspace.path });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(`already completed (outcome unverified): session ${rerunId} ended; nothing to resume`);
      expect(resumed.stderr).toBe('');
      // The source itself is damaged, and resuming it says so.
      const damaged = await runInProcess(['resume', sourceId], { cwd: workspace.path });
      expect(damaged.code).toBe(1);
      expect(damaged.stderr).toContain('STORE_CORRUPT_RECORD');
    } finally {
      await workspace.remove();
    }
  });

  it('rein replay reads back every blob the log names: a tampered model input is BLOB_CORRUPT, not "verified" (D2)', async () => {
    const workspace = await makeTempDir('rein-damaged-blob-');
    try {
      const turns = Array.from({ length: 3 }, (_, index) => ({ text: `Looking ${index}.`, toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [...turns, { text: 'Done.' }] }));
      const made = await runInProcess(['run', 'look', '--script', 'script.json', '--json'], { cwd: workspace.path });
      expect(made.code, made.stderr).toBe(0);
      const records = jsonLines(made.stdout);
      const id = records[0]!.stream as string;
      expect((await runInProcess(['replay', id], { cwd: workspace.path })).code).toBe(0);
      // The second model input: stored as a delta against the first, and the base of the ones after it.
      const inputs = entriesOfRows(records).filter((record) => record.type === 'context.projected').map((record) => (record.data as { input: string }).input);
      expect(inputs.length).toBeGreaterThanOrEqual(3);
      const ref = inputs[1]!;
      const store = await openLevelEventStore(join(workspace.path, '.rein'));
      const original = await store.readBlob(id, ref as `artifact://${string}`);
      await store.close();
      await tamperStreamBlob(join(workspace.path, '.rein', 'streams', id), ref.slice(ref.lastIndexOf('/') + 1), original);

      const replayed = await runInProcess(['replay', id], { cwd: workspace.path });
      expect(replayed.code).toBe(1);
      expect(replayed.stdout).not.toContain('verified');
      expect(replayed.stderr).toContain(`rein: BLOB_CORRUPT: blob ${ref} does not match its content hash`);
      const json = await runInProcess(['replay', id, '--json'], { cwd: workspace.path });
      expect(json.code).toBe(1);
      expect(json.stderr).toContain('BLOB_CORRUPT');
      // The same code `rein context` reports for that turn.
      const context = await runInProcess(['context', id, '--turn', '2'], { cwd: workspace.path });
      expect(context.code).toBe(1);
      expect(context.stderr).toContain('BLOB_CORRUPT');
    } finally {
      await workspace.remove();
    }
  });
});
