import { describe, expect, it } from 'vitest';
import { createMemoryEventStore, MemoryStorage } from '../../stores/index.js';
import { refDigest } from '../../stores/blob-hash.js';
import { describeEventStoreConformance } from './event-store.conformance.js';
import { decodeRecord, encodeRecord } from '../../stores/record-drafts.js';

/** Flip one bit of stored bytes (the last one, or the first), as a failing memory cell would. */
const flip = (bytes: Uint8Array | undefined, at: 'first' | 'last'): void => {
  if (bytes === undefined || bytes.length === 0) throw new Error('nothing stored there');
  const index = at === 'first' ? 0 : bytes.length - 1;
  bytes[index] = bytes[index]! ^ 0x01;
};

describeEventStoreConformance({
  name: 'memory',
  async open() {
    const storage = new MemoryStorage();
    const store = createMemoryEventStore({ storage });
    return {
      store,
      corrupt: async (stream, seq) => flip(storage.streams.get(stream)?.records[seq - 1], 'last'),
      corruptBlob: async (ref) => flip(storage.blobs.get(refDigest(ref)), 'first'),
      corruptStreamBlob: async (stream, ref) => flip(storage.streams.get(stream)?.blobs.get(refDigest(ref)), 'first'),
      rawChain: async (stream) => {
        const found = storage.streams.get(stream)!;
        return found.records.map((stored, index) => ({ record: decodeRecord(stored, stream, index + 1), field: found.chain[index] }));
      },
      forge: async (stream, entries, options) => {
        const found = storage.streams.get(stream)!;
        found.records = entries.map((entry) => encodeRecord(entry.record, 'compact'));
        found.chain = entries.map((entry) => entry.field);
        if (options?.dropSeal) delete found.seal;
        return store;
      },
      withKey: async (chainKey) => createMemoryEventStore({ storage, chainKey }),
    };
  },
});

describe('memory store: what an append keeps', () => {
  const draft = (id: string) => ({ id, type: 'user.message', v: 1, at: 1, actor: 'root', data: { text: id } });

  it('keeps a summary as it was at the append: copied when it can change, kept as it is when deeply frozen', async () => {
    const store = createMemoryEventStore();
    const open = { calls: 1, models: [{ calls: 1 }] };
    await store.append('s-open', [draft('a')], { expectedSeq: 0, summary: open });
    open.calls = 9;
    open.models[0]!.calls = 9;
    expect((await store.info('s-open'))?.summary).toEqual({ seq: 1, value: { calls: 1, models: [{ calls: 1 }] } });
    const frozen = Object.freeze({ calls: 2, models: Object.freeze([Object.freeze({ calls: 2 })]) });
    await store.append('s-frozen', [draft('a')], { expectedSeq: 0, summary: frozen });
    const read = (await store.info('s-frozen'))?.summary;
    expect(read).toEqual({ seq: 1, value: { calls: 2, models: [{ calls: 2 }] } });
    expect(read?.value).not.toBe(frozen);
    // Frozen at the top only: copied at the append, like any value that can change.
    const shallow = Object.freeze({ models: [{ calls: 3 }] });
    await store.append('s-shallow', [draft('a')], { expectedSeq: 0, summary: shallow });
    shallow.models[0]!.calls = 4;
    expect((await store.info('s-shallow'))?.summary?.value).toEqual({ models: [{ calls: 3 }] });
    await store.close();
  });

  it('keeps the global order across streams and forks', async () => {
    const store = createMemoryEventStore();
    await store.append('s-a', [draft('a1'), draft('a2')], { expectedSeq: 0 });
    await store.append('s-b', [draft('b1')], { expectedSeq: 0 });
    await store.append('s-a', [draft('a3')], { expectedSeq: 2 });
    await store.fork('s-a', 2, { newStream: 's-c' });
    const all = await store.readAll();
    expect(all.map(({ position, record }) => [position, record.stream, record.seq])).toEqual([
      ['1', 's-a', 1],
      ['2', 's-a', 2],
      ['3', 's-b', 1],
      ['4', 's-a', 3],
      ['5', 's-c', 1],
      ['6', 's-c', 2],
    ]);
    expect((await store.readAll({ after: '3', limit: 2 })).map(({ record }) => record.id)).toEqual(['a3', 'a1']);
    await store.close();
  });
});
