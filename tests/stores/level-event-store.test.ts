import { existsSync } from 'node:fs';
import { open, readdir, readFile, readlink, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, openLevelEventStore } from '../../stores/index.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { encodeRecord } from '../../stores/record-drafts.js';
import type { LevelEventStore, LevelEventStoreOptions } from '../../stores/index.js';
import { refDigest } from '../../stores/blob-hash.js';
import { blobKey, deltaKey, recordKey } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { describeEventStoreConformance } from './event-store.conformance.js';
import { holdStreamInAnotherProcess, runBuiltStoreInChild } from './level-child-process.js';
import type { RawWrite } from './level-child-process.js';
import { drafts, expectCode, temporaryDirectory } from './store-test-support.js';
import { levelForge, levelRawChain } from './level-raw-chain.js';

/**
 * Flip one bit of a value in a stream's database, as a failing disk would: the store lets go of the database
 * (`release`), the bytes are changed through classic-level directly, and the store reopens it on its next use.
 */
/** Flips one bit of the value under the first of `keys` the stream holds (a blob is stored whole or as a delta). */
const damageStreamValue = async (store: LevelEventStore, root: string, stream: string, keys: string | readonly string[], at: 'first' | 'last'): Promise<void> => {
  await store.release(stream);
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  try {
    const candidates = typeof keys === 'string' ? [keys] : keys;
    const values = await database.getMany([...candidates]);
    const found = values.findIndex((value) => value !== undefined);
    const key = candidates[Math.max(found, 0)]!;
    const stored = values[Math.max(found, 0)];
    if (stored === undefined) throw new Error(`no value ${key} in ${stream}`);
    const damaged = Uint8Array.from(stored);
    const index = at === 'first' ? 0 : damaged.length - 1;
    damaged[index] = damaged[index]! ^ 0x01;
    await database.put(key, damaged, { sync: true });
  } finally {
    await database.close();
  }
};

/** The key of the stored value holding record `seq`: its own, or its group's (keyed by the group's last seq). */
const valueKeyOf = async (store: LevelEventStore, root: string, stream: string, seq: number): Promise<string> => {
  await store.release(stream);
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  try {
    const [key] = await database.keys({ gte: recordKey(seq), lt: 'e"', limit: 1 }).all();
    if (key === undefined) throw new Error(`no value holds seq ${seq} of ${stream}`);
    return key;
  } finally {
    await database.close();
  }
};

let parent: { path: string; remove(): Promise<void> };
let counter = 0;
const freshRoot = (): string => join(parent.path, `store-${++counter}`);

beforeAll(async () => {
  parent = await temporaryDirectory('rein-level-store-');
});
afterAll(async () => {
  await parent.remove();
});

describeEventStoreConformance({
  name: 'level',
  async open() {
    const root = freshRoot();
    let store = await openLevelEventStore(root);
    return {
      store,
      corrupt: async (stream, seq) => damageStreamValue(store, root, stream, await valueKeyOf(store, root, stream, seq), 'last'),
      corruptStreamBlob: (stream, ref) => damageStreamValue(store, root, stream, [blobKey(refDigest(ref)), deltaKey(refDigest(ref))], 'last'),
      corruptBlob: async (ref) => {
        const path = store.blobs.pathOf(ref);
        const bytes = await readFile(path);
        bytes[0] = bytes[0]! ^ 0x01;
        await writeFile(path, bytes);
      },
      reopen: async () => {
        await store.close();
        store = await openLevelEventStore(root);
        return store;
      },
      rawChain: async (stream) => {
        await store.release(stream);
        return levelRawChain(root, stream);
      },
      // Closed first: the clean close writes the seal the forger then finds on disk.
      forge: async (stream, entries, options) => {
        await store.close();
        await levelForge(root, stream, entries, options);
        store = await openLevelEventStore(root);
        return store;
      },
      withKey: (chainKey) => openLevelEventStore(root, { chainKey }),
    };
  },
});

/** The `.log` files (write-ahead logs) of a stream database, largest first. */
async function writeAheadLogs(root: string, stream: string): Promise<string[]> {
  const directory = join(root, 'streams', stream);
  const logs = (await readdir(directory)).filter((name) => name.endsWith('.log')).map((name) => join(directory, name));
  const sized = await Promise.all(logs.map(async (path) => ({ path, size: (await stat(path)).size })));
  return sized.filter((log) => log.size > 0).sort((left, right) => right.size - left.size).map((log) => log.path);
}

/** Stored records `first..first + count - 1` of stream `s`, as raw LevelDB writes another process can apply. */
function rawRecords(first: number, count: number, padding = 0): RawWrite[] {
  return drafts(first, count).map((draft, index) => {
    const seq = first + index;
    const record = { stream: 's', seq, ...draft, data: { index: seq, padding: 'p'.repeat(padding) } };
    return { key: `e!${seq.toString(16).padStart(16, '0')}`, value: encodeValue(record) };
  });
}

/** Opens a closed stream's LevelDB directly (beneath the store) for `edit`, then closes it. */
async function editRawStream(root: string, stream: string, edit: (database: ClassicLevel<string, Uint8Array>) => Promise<unknown>): Promise<void> {
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  try {
    await edit(database);
  } finally {
    await database.close();
  }
}

async function storeWithRecords(count: number, options: LevelEventStoreOptions = {}): Promise<{ root: string; store: LevelEventStore }> {
  const root = freshRoot();
  const store = await openLevelEventStore(root, options);
  for (let head = 0; head < count; head += 10) await store.append('s', drafts(head + 1, 10), { expectedSeq: head });
  return { root, store };
}

describe('LevelEventStore', () => {
  it('never creates directories when reading streams that do not exist', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    expect(await store.read('ghost')).toEqual([]);
    expect(await store.head('ghost')).toBe(0);
    expect(await store.info('ghost')).toBeUndefined();
    expect(await store.streams()).toEqual([]);
    await expectCode(store.fork('ghost', 1), 'STORE_STREAM_NOT_FOUND');
    await store.close();
    expect(existsSync(root)).toBe(false);
  });

  it('reads a stream another process holds, and refuses to write it with STORE_LOCKED', async () => {
    const { root, store } = await storeWithRecords(20);
    await store.saveSnapshot('s', { seq: 20, version: 'm@1', at: 1, data: 'snap' });
    await store.close();
    const holder = await holdStreamInAnotherProcess({
      directory: join(root, 'streams', 's'),
      configFile: join(root, 'holder.json'),
      before: rawRecords(21, 1),
    });
    const reader = await openLevelEventStore(root);
    try {
      expect((await reader.read('s')).map((record) => record.seq)).toEqual(Array.from({ length: 21 }, (_, index) => index + 1));
      expect(await reader.head('s')).toBe(21);
      expect((await reader.info('s'))?.head).toBe(21);
      expect((await reader.streams()).map((info) => [info.stream, info.head])).toEqual([['s', 21]]);
      expect((await reader.loadSnapshot('s'))?.data).toBe('snap');
      await expectCode(reader.append('s', drafts(22, 1), { expectedSeq: 21 }), 'STORE_LOCKED');
      await expectCode(reader.saveSnapshot('s', { seq: 21, version: 'm@1', at: 1, data: null }), 'STORE_LOCKED');
      expect((await reader.fork('s', 21, { newStream: 'copy' })).head).toBe(21);
    } finally {
      await holder.release();
    }
    await reader.append('s', drafts(22, 1), { expectedSeq: 21 });
    expect(await reader.head('s')).toBe(22);
    await reader.close();
  });

  it('reads gap-free prefixes of a stream another process is writing and compacting', async () => {
    const { root, store } = await storeWithRecords(10);
    await store.close();
    const total = 6000;
    const holder = await holdStreamInAnotherProcess({
      directory: join(root, 'streams', 's'),
      configFile: join(root, 'holder.json'),
      before: [],
      after: rawRecords(11, total - 10, 600),
    });
    const reader = await openLevelEventStore(root);
    const heads: number[] = [];
    try {
      let finished = false;
      void holder.done.then(() => (finished = true));
      while (!finished || heads.at(-1) !== total) {
        const records = await reader.read('s');
        expect(records.every((record, index) => record.seq === index + 1)).toBe(true);
        heads.push(records.length);
      }
    } finally {
      await holder.release();
      await reader.close();
    }
    expect(heads).toEqual([...heads].sort((left, right) => left - right));
    expect(heads.at(-1)).toBe(total);
  }, 60_000);

  it('keeps reading a stream an earlier build wrote with codec /1, in the envelope layout it holds, and starts its chain at the next append', async () => {
    const { root, store } = await storeWithRecords(10);
    await store.close();
    // Rewrite the stream as the earlier build stored it: meta codec `/1` and every record an envelope map.
    const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const meta = JSON.parse(Buffer.from((await database.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    meta.codec.id = 'rein.msgpackr2-plain.crc32/1';
    await database.batch([{ type: 'put', key: 'm!meta', value: Buffer.from(JSON.stringify(meta)) }, ...rawRecords(1, 10).map((write) => ({ type: 'put' as const, ...write }))]);
    await database.close();
    // The earlier build's clean close recorded the head without a seal.
    await writeFile(join(root, 'streams', 's', 'rein-watermark.json'), JSON.stringify({ head: 10 }));
    const reopened = await openLevelEventStore(root);
    const before = await reopened.read('s');
    expect(before.map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await reopened.verifyChain('s')).toMatchObject({ status: 'unchained', seq: 1 });
    await reopened.append('s', drafts(11, 5), { expectedSeq: 10 });
    expect((await reopened.read('s')).map((record) => record.seq)).toEqual(Array.from({ length: 15 }, (_, index) => index + 1));
    // The chain starts at the upgrade; its first record covers the ten written before it.
    expect(await reopened.verifyChain('s')).toMatchObject({ status: 'authenticated', chainedFrom: 11, head: 15 });
    await reopened.close();
    const check = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await check.open();
    const formats = (await check.values({ gte: recordKey(1), lte: recordKey(15) }).all()).map((value) => value[0]);
    const upgraded = JSON.parse(Buffer.from((await check.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    await check.close();
    // The records written before keep their layout; the new ones are one chained group, and the meta says `/4`, so the
    // earlier build refuses the stream rather than append unchained records to it.
    expect(formats).toEqual([...Array.from({ length: 10 }, () => 0x01), 0x07]);
    expect(upgraded.codec.id).toBe('rein.msgpackr2-plain.crc32/4');
  });

  it('keeps reading a stream an earlier build wrote with codec /2, in the compact layout it holds, and starts its chain at the next append', async () => {
    const { root, store } = await storeWithRecords(10);
    await store.close();
    // Rewrite the stream as the earlier build stored it: meta codec `/2` and every record a compact row.
    const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const meta = JSON.parse(Buffer.from((await database.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    meta.codec.id = 'rein.msgpackr2-plain.crc32/2';
    const rows = rawRecords(1, 10).map((write, index) => ({ type: 'put' as const, key: write.key, value: encodeRecord({ ...(decodeValue(write.value, { stream: 's' }) as RecordEnvelope), data: { digest: `b3:${'ab'.repeat(32)}`, index } }, 'compact') }));
    await database.batch([{ type: 'put', key: 'm!meta', value: Buffer.from(JSON.stringify(meta)) }, ...rows]);
    await database.close();
    await writeFile(join(root, 'streams', 's', 'rein-watermark.json'), JSON.stringify({ head: 10 }));
    const reopened = await openLevelEventStore(root);
    expect((await reopened.read('s')).map((record) => (record.data as { digest: string }).digest)).toEqual(Array.from({ length: 10 }, () => `b3:${'ab'.repeat(32)}`));
    await reopened.append('s', drafts(11, 5).map((draft) => ({ ...draft, data: { digest: `b3:${'cd'.repeat(32)}` } })), { expectedSeq: 10 });
    expect((await reopened.read('s', { from: 11 })).map((record) => (record.data as { digest: string }).digest)).toEqual(Array.from({ length: 5 }, () => `b3:${'cd'.repeat(32)}`));
    expect(await reopened.verifyChain('s')).toMatchObject({ status: 'authenticated', chainedFrom: 11, head: 15 });
    await reopened.close();
    const check = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await check.open();
    const formats = (await check.values({ gte: recordKey(1), lte: recordKey(15) }).all()).map((value) => value[0]);
    await check.close();
    expect(formats).toEqual([...Array.from({ length: 10 }, () => 0x02), 0x07]);
  });

  it('stores new streams in groups, one per append: no stream name in any value, digests as their bytes', async () => {
    const { root, store } = await storeWithRecords(10);
    const digest = `b3:${'0f'.repeat(32)}`;
    await store.append('s', drafts(11, 1).map((draft) => ({ ...draft, data: { digest, near: `b3:${'0F'.repeat(32)}` } })), { expectedSeq: 10 });
    expect((await store.read('s', { from: 11 }))[0]!.data).toEqual({ digest, near: `b3:${'0F'.repeat(32)}` });
    await store.close();
    const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const meta = JSON.parse(Buffer.from((await database.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    const values = await database.values({ gte: recordKey(1), lte: recordKey(11) }).all();
    await database.close();
    expect(meta.codec.id).toBe('rein.msgpackr2-plain.crc32/4');
    // One value per append (a group, format byte 7), under the key of its last record.
    expect(values.map((value) => value[0])).toEqual([0x07, 0x07]);
    const last = Buffer.from(values.at(-1)!);
    // The lower-case digest is stored as its 32 bytes; upper-case hex is not a digest rein writes and stays text.
    expect(last.includes(Buffer.from('0f'.repeat(32), 'hex'))).toBe(true);
    expect(last.includes(Buffer.from('0f'.repeat(32)))).toBe(false);
    expect(last.includes(Buffer.from('0F'.repeat(32)))).toBe(true);
  });

  it('reports a stream whose records outlive its meta key as STORE_CORRUPT_RECORD, never as a missing session', async () => {
    // A damaged table's filter block can make LevelDB answer "not found" for the meta key it holds; the meta is
    // written in the same batch as the first records, so records without it are damage.
    const { root, store } = await storeWithRecords(10);
    await store.close();
    await editRawStream(root, 's', (database) => database.del('m!meta'));
    const reopened = await openLevelEventStore(root);
    try {
      await expectCode(reopened.head('s'), 'STORE_CORRUPT_RECORD');
      await expectCode(reopened.read('s'), 'STORE_CORRUPT_RECORD');
    } finally {
      await reopened.close();
    }
  });

  it('reports a cleanly closed stream that lost every record and its meta as STORE_CORRUPT_RECORD in reads and chain checks', async () => {
    const { root, store } = await storeWithRecords(10);
    await store.close();
    await editRawStream(root, 's', async (database) => {
      const keys = await database.keys({ gte: 'e!', lt: 'e"' }).all();
      await database.batch([...keys, 'm!meta'].map((key) => ({ type: 'del' as const, key })));
    });
    const reopened = await openLevelEventStore(root);
    try {
      await expectCode(reopened.read('s'), 'STORE_CORRUPT_RECORD');
      await expectCode(reopened.verifyChain('s'), 'STORE_CORRUPT_RECORD');
    } finally {
      await reopened.close();
    }
  });

  it('raises STORE_CODEC_MISMATCH when a stream was written with another codec', async () => {
    const { root, store } = await storeWithRecords(10);
    await store.close();
    const database = new ClassicLevel<string, string>(join(root, 'streams', 's'));
    const meta = JSON.parse((await database.get('m!meta'))!) as { codec: { id: string } };
    meta.codec.id = 'someone-else/9';
    await database.put('m!meta', JSON.stringify(meta));
    await database.close();
    const reopened = await openLevelEventStore(root);
    await expectCode(reopened.read('s'), 'STORE_CODEC_MISMATCH');
    await expectCode(reopened.append('s', drafts(11, 1), { expectedSeq: 10 }), 'STORE_CODEC_MISMATCH');
    await reopened.close();
  });

  it('reports a truncated write-ahead log instead of returning a shorter stream', async () => {
    const { root, store } = await storeWithRecords(40);
    await store.close();
    const [log] = await writeAheadLogs(root, 's');
    await truncate(log!, Math.floor((await stat(log!)).size / 2));
    const reopened = await openLevelEventStore(root);
    await expectCode(reopened.read('s'), 'STORE_CORRUPT_RECORD');
    await expectCode(reopened.head('s'), 'STORE_CORRUPT_RECORD');
    await reopened.close();
  });

  it('reports a bit-flipped write-ahead log, on this open and every later one', async () => {
    const { root, store } = await storeWithRecords(40);
    await store.close();
    const [log] = await writeAheadLogs(root, 's');
    const bytes = await readFile(log!);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = bytes[middle]! ^ 0x10;
    await writeFile(log!, bytes);
    for (let attempt = 0; attempt < 2; attempt++) {
      const reopened = await openLevelEventStore(root);
      await expectCode(reopened.read('s'), 'STORE_CORRUPT_RECORD');
      await reopened.close();
    }
  });

  it('keeps appending and reading when more streams are used than may stay open', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root, { maxOpenStreams: 2 });
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const round of [0, 1, 2]) {
      await Promise.all(names.map((name) => store.append(name, drafts(round * 2 + 1, 2), { expectedSeq: round * 2 })));
    }
    for (const name of names) expect((await store.read(name)).map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await store.streams()).map((info) => info.head)).toEqual([6, 6, 6, 6, 6]);
    await store.close();
  });

  it('commits by fdatasyncing the write-ahead log that already holds the batch, writing nothing more to LevelDB', async () => {
    const root = freshRoot();
    const synced: number[] = [];
    const store = await openLevelEventStore(root, { onSync: (_stream, head) => synced.push(head) });
    await store.append('s', drafts(1, 2), { expectedSeq: 0 });
    await store.append('s', drafts(3, 2), { expectedSeq: 2, sync: false });
    const directory = join(root, 'streams', 's');
    // The batch is in the log once its append resolved (LevelDB flushed it to the OS): what an fdatasync makes durable.
    const logs = (await readdir(directory)).filter((name) => name.endsWith('.log'));
    expect(logs.length).toBeGreaterThan(0);
    const logged = Buffer.concat(await Promise.all(logs.map((name) => readFile(join(directory, name)))));
    expect(logged.includes(Buffer.from(recordKey(4)))).toBe(true);
    const probe = await open(join(directory, logs[0]!), 'r');
    const fileHandle = Object.getPrototypeOf(probe) as { datasync: (this: { fd: number }) => Promise<void> };
    await probe.close();
    const datasync = fileHandle.datasync;
    const syncedFiles: string[] = [];
    fileHandle.datasync = async function (this: { fd: number }) {
      syncedFiles.push(await readlink(`/proc/self/fd/${this.fd}`));
      return datasync.call(this);
    };
    const levelWrites: string[] = [];
    const { put, batch } = ClassicLevel.prototype;
    ClassicLevel.prototype.put = function (this: ClassicLevel<string, Uint8Array>, ...args: Parameters<typeof put>) {
      levelWrites.push(`put ${String(args[0])}`);
      return put.apply(this, args);
    } as typeof put;
    ClassicLevel.prototype.batch = function (this: ClassicLevel<string, Uint8Array>, ...args: unknown[]) {
      levelWrites.push('batch');
      return (batch as (...rest: unknown[]) => unknown).apply(this, args);
    } as typeof batch;
    try {
      await store.commit('s', 4);
    } finally {
      fileHandle.datasync = datasync;
      Object.assign(ClassicLevel.prototype, { put, batch });
    }
    expect(levelWrites).toEqual([]);
    expect(syncedFiles.some((file) => file.startsWith(directory) && file.endsWith('.log'))).toBe(true);
    expect(synced.at(-1)).toBe(4);
    await store.close();
    const reopened = await openLevelEventStore(root);
    expect((await reopened.read('s')).map((record) => record.seq)).toEqual([1, 2, 3, 4]);
    await reopened.close();
  });

  it("writes the next appends while a group commit's fsync runs, and commits them together with one fsync that starts after it", async () => {
    const root = freshRoot();
    const synced: number[] = [];
    const store = await openLevelEventStore(root, { commitDelayMs: 0, onSync: (_stream, head) => synced.push(head) });
    await store.append('s', drafts(1, 2), { expectedSeq: 0, sync: false });
    const directory = join(root, 'streams', 's');
    const logs = (await readdir(directory)).filter((name) => name.endsWith('.log'));
    const probe = await open(join(directory, logs[0]!), 'r');
    const fileHandle = Object.getPrototypeOf(probe) as { datasync: (this: { fd: number }) => Promise<void> };
    await probe.close();
    const datasync = fileHandle.datasync;
    // The disk is slow: every fdatasync of the stream's log waits until the test lets it go.
    const held: Array<() => void> = [];
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    let fsyncs = 0;
    fileHandle.datasync = async function (this: { fd: number }) {
      fsyncs++;
      started();
      await new Promise<void>((resolve) => held.push(resolve));
      return datasync.call(this);
    };
    try {
      const firstCommit = store.commit('s', 2);
      await firstStarted;
      // The fsync of seqs 1..2 is under way: the next appends are written meanwhile (they used to wait for the disk).
      const stored = await store.append('s', drafts(3, 2), { expectedSeq: 2, sync: false });
      expect(stored.map((record) => record.seq)).toEqual([3, 4]);
      let secondDone = false;
      const secondCommit = store.commit('s', 4).then(() => (secondDone = true));
      await store.append('s', drafts(5, 2), { expectedSeq: 4, sync: false });
      const thirdCommit = store.commit('s', 6);
      for (let round = 0; round < 5; round++) await new Promise((resolve) => setImmediate(resolve));
      // One fsync at a time: the commits asked for meanwhile wait for it to end, then share the next one.
      expect(fsyncs).toBe(1);
      while (held.length > 0) held.shift()!();
      await firstCommit;
      // The fsync that was running when seqs 3..4 were written does not vouch for them.
      expect(synced[0]).toBe(2);
      for (let round = 0; round < 100 && !secondDone; round++) {
        while (held.length > 0) held.shift()!();
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all([secondCommit, thirdCommit]);
      expect(synced.at(-1)).toBe(6);
      expect(fsyncs).toBe(2);
    } finally {
      fileHandle.datasync = datasync;
    }
    await store.close();
  });

  describe('relaxed durability', () => {
    it('acknowledges appends, group-commits them, and keeps them across a reopen', async () => {
      const { root, store } = await storeWithRecords(30, { durability: 'relaxed', groupCommitIntervalMs: 5 });
      expect(await store.head('s')).toBe(30);
      await store.append('s', drafts(31, 1), { expectedSeq: 30, sync: true });
      await store.append('s', drafts(32, 1), { expectedSeq: 31 });
      await store.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await store.close();
      const reopened = await openLevelEventStore(root);
      expect(await reopened.head('s')).toBe(32);
      await reopened.close();
    });

    it.skipIf(!existsSync(new URL('../../dist/stores/index.js', import.meta.url)))(
      'loses no acknowledged append when the writing process is killed (built store in a child process)',
      async () => {
        const root = freshRoot();
        const acknowledged = await runBuiltStoreInChild(root, 200);
        const reopened = await openLevelEventStore(root);
        expect(await reopened.head('s')).toBeGreaterThanOrEqual(acknowledged);
        expect((await reopened.read('s')).map((record) => record.seq)).toEqual(
          Array.from({ length: await reopened.head('s') }, (_, index) => index + 1),
        );
        await reopened.close();
      },
    );
  });
});
