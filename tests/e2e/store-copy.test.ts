import { cp, readdir, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { RECORD_KEYS } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'HELLO\n' } }] },
    { text: 'Done.' },
  ],
};

/** Every record of a stream database as stored: key → bytes. */
const rawRecords = async (root: string, stream: string): Promise<Map<string, Buffer>> => {
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS, createIfMissing: false });
  await database.open();
  try {
    const entries = new Map<string, Buffer>();
    for await (const [key, value] of database.iterator(RECORD_KEYS)) entries.set(key, Buffer.from(value));
    return entries;
  } finally {
    await database.close();
  }
};

describePostgres('rein store copy', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-store-copy-');
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterAll(() => workspace.remove());

  it('round-trips LevelDB → PostgreSQL → LevelDB record for record, verifying every session by replay', async () => {
    const ids: string[] = [];
    for (const task of ['first', 'second']) {
      const run = await runInProcess(['run', task, '--script', 'script.json', '--approve', 'write'], { cwd: workspace.path });
      expect(run.code).toBe(0);
      ids.push(/session (s-[\w-]+):/.exec(run.stdout)![1]!);
    }
    // Fork where the task's step ends: at the first model call it requested.
    const boundary = entriesOfRows(jsonLines((await runInProcess(['show', ids[0]!, '--json'], { cwd: workspace.path })).stdout)).find((record) => record.type === 'effect.requested')!.seq as number;
    const fork = await runInProcess(['fork', ids[0]!, '--at', String(boundary), '--json'], { cwd: workspace.path });
    ids.push(jsonLines(fork.stdout)[0]!.sessionId as string);
    const original = join(workspace.path, '.rein');
    const url = freshSchemaUrl();
    const back = join(workspace.path, 'back');

    const there = await runInProcess(['store', 'copy', '--from', original, '--to', url, '--json'], { cwd: workspace.path });
    expect(there.stderr).toBe('');
    const copied = jsonLines(there.stdout);
    for (const id of ids) expect(copied.find((line) => line.stream === id)).toMatchObject({ outcome: 'copied', verified: expect.any(Number) });
    const again = jsonLines((await runInProcess(['store', 'copy', '--from', original, '--to', url, '--json'], { cwd: workspace.path })).stdout);
    expect(again.every((line) => line.outcome === 'present')).toBe(true);

    const home = await runInProcess(['store', 'copy', '--from', url, '--to', back, '--json'], { cwd: workspace.path });
    expect(home.stderr).toBe('');
    expect(jsonLines(home.stdout).filter((line) => ids.includes(line.stream))).toHaveLength(ids.length);

    const before = await openLevelEventStore(original);
    const after = await openLevelEventStore(back);
    try {
      for (const id of ids) {
        // The same records, field for field: how they are grouped into stored values follows the appends that made
        // them (a session's steps there, the copy's batches here), so the stored bytes may differ.
        expect(await after.read(id)).toEqual(await before.read(id));
        await after.release(id);
        expect((await rawRecords(back, id)).size).toBeGreaterThan(0);
        expect((await after.info(id))?.createdAt).toBe((await before.info(id))?.createdAt);
        const refs = new Set(JSON.stringify(await before.read(id)).match(/artifact:\/\/blake3\/[0-9a-f]{64}/g) ?? []);
        for (const ref of refs) expect(Buffer.from(await after.readBlob(id, ref))).toEqual(Buffer.from(await before.readBlob(id, ref)));
      }
    } finally {
      await before.close();
      await after.close();
    }
    const replay = await runInProcess(['replay', ids[1]!, '--store', back], { cwd: workspace.path });
    expect(replay.code).toBe(0);
  });
});

describePostgres('rein store copy around damage, conflicts and growth', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-store-copy-damage-');
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterAll(() => workspace.remove());

  const sessionIdOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  const listed = async (store: string, status?: string) =>
    jsonLines((await runInProcess(['sessions', '--json', '--store', store, ...(status ? ['--status', status] : [])], { cwd: workspace.path })).stdout)
      .map(({ id, status: listedStatus, head, task, createdAt }) => ({ id, status: listedStatus, head, task, createdAt }))
      .sort((left, right) => (left.id < right.id ? -1 : 1));
  const copy = async (from: string, to: string) => {
    const result = await runInProcess(['store', 'copy', '--from', from, '--to', to, '--json'], { cwd: workspace.path });
    return { ...result, lines: new Map(jsonLines(result.stdout).map((line) => [line.stream as string, line])) };
  };

  it('fills the status index as native sessions do, copies every healthy stream, appends a grown tail, reports each damaged or conflicting stream and fails at the end', async () => {
    const completed = sessionIdOf((await runInProcess(['run', 'finish', '--script', 'script.json', '--approve', 'write'], { cwd: workspace.path })).stdout);
    const paused = await runInProcess(['run', 'wait for a yes', '--script', 'script.json'], { cwd: workspace.path });
    expect(paused.code).toBe(3);
    const waiting = sessionIdOf(paused.stdout);
    const exhausted = sessionIdOf((await runInProcess(['run', 'run out', '--script', 'script.json', '--approve', 'write', '--max-turns', '1'], { cwd: workspace.path })).stdout);
    const original = join(workspace.path, '.rein');
    const url = freshSchemaUrl();

    const first = await copy(original, url);
    expect(first.code).toBe(0);
    expect([...first.lines.values()].map((line) => line.outcome)).toEqual(['copied', 'copied', 'copied']);
    // Listed from the PostgreSQL index exactly as from the LevelDB logs, under every status filter.
    const native = await listed(original);
    expect(native.map((line) => line.status).sort()).toEqual(['awaiting-approval', 'budget-exhausted', 'completed']);
    expect(await listed(url)).toEqual(native);
    for (const [status, id] of [['completed', completed], ['awaiting-approval', waiting], ['budget-exhausted', exhausted]] as const) {
      expect((await listed(url, status)).map((line) => line.id)).toEqual([id]);
    }

    // A copy of the store whose paused session then goes another way, and one with a damaged session.
    const diverged = join(workspace.path, 'diverged');
    const damaged = join(workspace.path, 'damaged');
    await cp(original, diverged, { recursive: true });
    await cp(original, damaged, { recursive: true });
    const manifest = (await readdir(join(damaged, 'streams', completed))).find((name) => name.startsWith('MANIFEST-'))!;
    await truncate(join(damaged, 'streams', completed, manifest), 10);
    expect((await runInProcess(['resume', waiting, '--approve', 'write'], { cwd: workspace.path })).code).toBe(0);
    expect((await runInProcess(['resume', waiting, '--approve', 'write', '--store', diverged], { cwd: workspace.path })).code).toBe(0);

    // The session grew: only its new tail is appended, and its index entry follows.
    const grown = await copy(original, url);
    expect(grown.code).toBe(0);
    expect(grown.lines.get(waiting)).toMatchObject({ outcome: 'extended', appended: expect.any(Number), verified: expect.any(Number) });
    expect(grown.lines.get(completed)).toMatchObject({ outcome: 'present' });
    expect((await listed(url, 'completed')).map((line) => line.id).sort()).toEqual([completed, waiting].sort());
    expect(await listed(url)).toEqual(await listed(original));

    const conflicting = await copy(diverged, url);
    expect(conflicting.code).toBe(1);
    expect(conflicting.stderr).toContain('STORE_COPY_INCOMPLETE');
    expect(conflicting.lines.get(waiting)).toMatchObject({ outcome: 'failed', error: { code: 'STORE_STREAM_EXISTS' } });
    expect(conflicting.lines.get(exhausted)).toMatchObject({ outcome: 'present' });

    const fresh = freshSchemaUrl();
    const aroundDamage = await copy(damaged, fresh);
    expect(aroundDamage.code).toBe(1);
    expect(aroundDamage.stderr).toContain('STORE_COPY_INCOMPLETE');
    expect(aroundDamage.lines.get(completed)).toMatchObject({ outcome: 'failed', error: { code: 'STORE_CORRUPT_RECORD' } });
    expect(aroundDamage.lines.get(waiting)).toMatchObject({ outcome: 'copied' });
    expect(aroundDamage.lines.get(exhausted)).toMatchObject({ outcome: 'copied' });
    expect((await listed(fresh)).map((line) => line.id).sort()).toEqual([waiting, exhausted].sort());
    const text = await runInProcess(['store', 'copy', '--from', damaged, '--to', freshSchemaUrl()], { cwd: workspace.path });
    expect(text.stdout).toContain(`failed ${completed}: STORE_CORRUPT_RECORD`);

    const missing = await runInProcess(['store', 'copy', '--from', join(workspace.path, 'no-such-store'), '--to', freshSchemaUrl()], { cwd: workspace.path });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('STORE_NOT_FOUND');
  });
});
