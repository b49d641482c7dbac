import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { RECORD_KEYS } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { jsonLines, runCli } from '../support/cli.js';
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

  it('round-trips LevelDB → PostgreSQL → LevelDB byte for byte, verifying every session by replay', async () => {
    const ids: string[] = [];
    for (const task of ['first', 'second']) {
      const run = await runCli(['run', task, '--script', 'script.json', '--approve', 'write'], { cwd: workspace.path });
      expect(run.code).toBe(0);
      ids.push(/session (s-[\w-]+):/.exec(run.stdout)![1]!);
    }
    // Fork where the task's step ends: at the first model call it requested.
    const boundary = jsonLines((await runCli(['show', ids[0]!, '--json'], { cwd: workspace.path })).stdout).find((record) => record.type === 'effect.requested')!.seq as number;
    const fork = await runCli(['fork', ids[0]!, '--at', String(boundary), '--json'], { cwd: workspace.path });
    ids.push(jsonLines(fork.stdout)[0]!.sessionId as string);
    const original = join(workspace.path, '.rein');
    const url = freshSchemaUrl();
    const back = join(workspace.path, 'back');

    const there = await runCli(['store', 'copy', '--from', original, '--to', url, '--json'], { cwd: workspace.path });
    expect(there.stderr).toBe('');
    const copied = jsonLines(there.stdout);
    for (const id of ids) expect(copied.find((line) => line.stream === id)).toMatchObject({ outcome: 'copied', verified: expect.any(Number) });
    const again = jsonLines((await runCli(['store', 'copy', '--from', original, '--to', url, '--json'], { cwd: workspace.path })).stdout);
    expect(again.every((line) => line.outcome === 'present')).toBe(true);

    const home = await runCli(['store', 'copy', '--from', url, '--to', back, '--json'], { cwd: workspace.path });
    expect(home.stderr).toBe('');
    expect(jsonLines(home.stdout).filter((line) => ids.includes(line.stream))).toHaveLength(ids.length);

    const before = await openLevelEventStore(original);
    const after = await openLevelEventStore(back);
    try {
      for (const id of ids) {
        expect(await rawRecords(back, id)).toEqual(await rawRecords(original, id));
        expect((await after.info(id))?.createdAt).toBe((await before.info(id))?.createdAt);
        const refs = new Set(JSON.stringify(await before.read(id)).match(/artifact:\/\/blake3\/[0-9a-f]{64}/g) ?? []);
        for (const ref of refs) expect(Buffer.from(await after.readBlob(id, ref))).toEqual(Buffer.from(await before.readBlob(id, ref)));
      }
    } finally {
      await before.close();
      await after.close();
    }
    const replay = await runCli(['replay', ids[1]!, '--store', back], { cwd: workspace.path });
    expect(replay.code).toBe(0);
  });
});
