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
