import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { BLOB_KEYS, RECORD_KEYS } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { EXTERNAL_STRING_LENGTH, attachExternal, decodeStoredRecord, encodeRecord, externalizeRecord } from '../../stores/record-drafts.js';
import { directoryBytes } from '../../scripts/bench/bench-support.js';
import { draft, temporaryDirectory } from './store-test-support.js';

const runs = Number(process.env.FC_RUNS ?? 50);

let parent: { path: string; remove(): Promise<void> };
let counter = 0;
const freshRoot = (): string => join(parent.path, `store-${++counter}`);

beforeAll(async () => {
  parent = await temporaryDirectory('rein-external-');
});
afterAll(async () => {
  await parent.remove();
});

/** A 200 KB tool-call argument, as a write of a large file would carry. */
const bigContent = Array.from({ length: 4_000 }, (_, line) => `line ${line}: ${'abcdefghij'.repeat(4)} ${(line * 7919) % 104_729}`).join('\n');

/** The two records a tool call with that argument leaves: the model's reply and the effect request. */
const toolCallDrafts = () => [
  draft(1, { type: 'model.responded', data: { toolCalls: [{ callId: 'c1', name: 'write', arguments: { path: 'big.txt', content: bigContent } }] } }),
  draft(2, { type: 'effect.requested', data: { effectId: 'e2', kind: 'executeTool', args: { callId: 'c1', name: 'write', arguments: { path: 'big.txt', content: bigContent } } } }),
];

const valuesOf = async (root: string, bounds: { gte: string; lt: string }): Promise<Uint8Array[]> => {
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  try {
    return await database.values(bounds).all();
  } finally {
    await database.close();
  }
};

describe('long strings stored as stream blobs', () => {
  it('stores a payload two records carry once, and reads both records back whole', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const appended = await store.append('s', toolCallDrafts(), { expectedSeq: 0 });
    expect(await store.read('s')).toEqual(appended);
    await store.close();
    const reopened = await openLevelEventStore(root);
    expect(await reopened.read('s')).toEqual(appended);
    await reopened.close();
    const blobs = await valuesOf(root, BLOB_KEYS);
    const records = await valuesOf(root, RECORD_KEYS);
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!.length).toBe(Buffer.byteLength(bigContent));
    expect(records.every((value) => value.length < 1_024)).toBe(true);
    // On disk: one copy of the payload (Snappy-compressed), not two.
    expect(await directoryBytes(join(root, 'streams', 's'))).toBeLessThan(1.5 * Buffer.byteLength(bigContent));
  });

  it('keeps the payload in a fork and in a tail', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const appended = await store.append('s', [...toolCallDrafts(), draft(3)], { expectedSeq: 0 });
    const fork = await store.fork('s', 2, { newStream: 'f' });
    expect((await store.read(fork.stream)).map((record) => record.data)).toEqual(appended.slice(0, 2).map((record) => record.data));
    const tailed: RecordEnvelope[] = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = store.tail('s').subscribe({
        next: (record) => {
          tailed.push(record);
          if (tailed.length === 3) {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    expect(tailed).toEqual(appended);
    await store.close();
  });

  it('reports a missing or altered blob as STORE_CORRUPT_RECORD naming the record, never a shorter value', async () => {
    for (const damage of ['delete', 'alter'] as const) {
      const root = freshRoot();
      const store = await openLevelEventStore(root);
      await store.append('s', toolCallDrafts(), { expectedSeq: 0 });
      await store.close();
      const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
      await database.open();
      const [key] = await database.keys(BLOB_KEYS).all();
      if (damage === 'delete') await database.del(key!);
      else await database.put(key!, Buffer.from(bigContent.replace('line 7:', 'line 8:'), 'utf8'));
      await database.close();
      const reopened = await openLevelEventStore(root);
      await expect(reopened.read('s')).rejects.toMatchObject({ code: 'STORE_CORRUPT_RECORD', seq: 1 });
      await expect(reopened.read('s', { from: 2 })).rejects.toMatchObject({ code: 'STORE_CORRUPT_RECORD', seq: 2 });
      await reopened.close();
    }
  });

  it('round-trips any data: long strings anywhere come back in place, short ones stay inline', async () => {
    const long = fc.string({ minLength: 1, maxLength: 8 }).map((seed) => seed.repeat(Math.ceil(EXTERNAL_STRING_LENGTH / seed.length) + 1));
    const leaf = fc.oneof({ weight: 4, arbitrary: fc.jsonValue({ maxDepth: 1 }) }, { weight: 1, arbitrary: long });
    const data = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('node'), { maxKeys: 3 })),
    })).node;
    await fc.assert(
      fc.asyncProperty(data, async (value) => {
        const envelope = { stream: 'p', seq: 4, id: 'r', type: 'x.y', v: 1, at: 5, actor: 'root', data: value } as RecordEnvelope;
        // The external row `/2` streams hold (a `/3` stream keeps them in its group rows: record-groups.prop.test.ts).
        const compact = encodeRecord(envelope, 'compact');
        const moved = await externalizeRecord(envelope, compact);
        const stored = moved?.value ?? compact;
        const { record, externals } = decodeStoredRecord(stored, 'p', 4);
        const texts = new Map(moved?.blobs.map((blob) => [blob.hex, Buffer.from(blob.bytes).toString('utf8')]));
        for (const external of externals ?? []) attachExternal(record, external, texts.get(external.hex)!);
        expect(JSON.stringify(record)).toBe(JSON.stringify(decodeStoredRecord(compact, 'p', 4).record));
        expect(stored.length).toBeLessThan(compact.length + 1);
      }),
      { numRuns: runs * 4 },
    );
  }, 120_000);
});
