import { createMemoryEventStore, MemoryStorage } from '../../stores/index.js';
import { refDigest } from '../../stores/blob-hash.js';
import { describeEventStoreConformance } from './event-store.conformance.js';

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
    };
  },
});
