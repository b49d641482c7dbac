import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { temporaryDirectory } from './store-test-support.js';
import { check, operation, runs } from './store-model.js';

describe('EventStore against an array model', () => {
  let parent: { path: string; remove(): Promise<void> };
  let counter = 0;
  beforeAll(async () => {
    parent = await temporaryDirectory('rein-store-prop-');
  });
  afterAll(async () => {
    await parent.remove();
  });

  it('memory backend matches the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 40 }), async (operations) => {
        const store = createMemoryEventStore();
        try {
          await check(store, operations);
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs },
    );
  }, 120_000);

  it('level backend matches the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 40 }), async (operations) => {
        const store = await openLevelEventStore(join(parent.path, `run-${++counter}`));
        try {
          await check(store, operations);
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
