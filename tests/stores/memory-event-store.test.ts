import { createMemoryEventStore } from '../../stores/index.js';
import { describeEventStoreConformance } from './event-store.conformance.js';

describeEventStoreConformance({
  name: 'memory',
  async open() {
    const store = createMemoryEventStore();
    return {
      store,
      corrupt: async (stream, seq) => store.corruptRecordForTesting(stream, seq),
      corruptBlob: async (ref) => store.blobs.corruptBlobForTesting(ref),
      corruptStreamBlob: async (stream, ref) => store.corruptStreamBlobForTesting(stream, ref),
    };
  },
});
