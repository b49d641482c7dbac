import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { decodeSummary } from '../../stores/level-stream-meta.js';
import { openPostgresEventStore } from '../../stores/index.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';

const draft = (id: string) => ({ id, type: 'user.message', v: 1, at: 1, actor: 'root', data: { text: id } });

/** A writer's summary of a stream (`AppendOptions.summary`) is kept with the head it describes, atomically with the batch. */
const summaryCases = (name: string, open: () => Promise<EventStore>, reopen?: () => Promise<EventStore>) =>
  describe(`${name}: the stream summary`, () => {
    it('is stored with the batch and its head, stays behind an append without one, and is not copied by a fork', async () => {
      const store = await open();
      try {
        expect((await store.info('s-sum'))?.summary).toBeUndefined();
        await store.append('s-sum', [draft('a'), draft('b')], { expectedSeq: 0, summary: { calls: 1 } });
        expect((await store.info('s-sum'))?.summary).toEqual({ seq: 2, value: { calls: 1 } });
        await store.append('s-sum', [draft('c')], { expectedSeq: 2 });
        expect((await store.info('s-sum'))?.summary).toEqual({ seq: 2, value: { calls: 1 } });
        await store.append('s-sum', [draft('d')], { expectedSeq: 3, summary: { calls: 2 } });
        expect((await store.info('s-sum'))?.summary).toEqual({ seq: 4, value: { calls: 2 } });
        const fork = await store.fork('s-sum', 3, { newStream: 's-sum-fork' });
        expect((await store.info(fork.stream))?.summary).toBeUndefined();
      } finally {
        await store.close();
      }
      if (reopen) {
        const again = await reopen();
        try {
          expect((await again.info('s-sum'))?.summary).toEqual({ seq: 4, value: { calls: 2 } });
        } finally {
          await again.close();
        }
      }
    });
  });

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rein-summary-'));
});
afterAll(() => rm(directory, { recursive: true, force: true }));

summaryCases('memory', async () => createMemoryEventStore());
summaryCases('LevelDB', () => openLevelEventStore(join(directory, 'store')), () => openLevelEventStore(join(directory, 'store'), { readOnly: true }));

describePostgres('PostgreSQL stream summary', () => {
  let url: string;
  summaryCases('PostgreSQL', async () => openPostgresEventStore((url = freshSchemaUrl())), () => openPostgresEventStore(url));
});

describe('LevelDB m!summary decoding', () => {
  it('ignores a summary that does not read back whole (it is a cache: the log rebuilds it)', () => {
    const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
    expect(decodeSummary(undefined)).toBeUndefined();
    expect(decodeSummary(bytes('{"seq":'))).toBeUndefined();
    expect(decodeSummary(bytes('{"seq":-1,"value":1}'))).toBeUndefined();
    expect(decodeSummary(bytes('{"seq":1.5,"value":1}'))).toBeUndefined();
    expect(decodeSummary(bytes('null'))).toBeUndefined();
    expect(decodeSummary(bytes('{"seq":3,"value":{"calls":1}}'))).toEqual({ seq: 3, value: { calls: 1 } });
  });
});
