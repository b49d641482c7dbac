import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { MemoryStorage, createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import type { EventStore } from '../../stores/index.js';
import { canonicalRecordBytes } from '../../stores/chain-canon.js';
import { encodeRecord } from '../../stores/record-drafts.js';
import { parseFixture } from '../../scripts/fixtures/fixture-format.js';
import { changeRecord, deleteRecord, insertRecord, relinkFrom, swapRecords, truncate, type ChainEntry } from './chain-forgery.js';
import { levelForge, levelRawChain } from './level-raw-chain.js';
import { temporaryDirectory } from './store-test-support.js';
import { propertyRuns } from '../support/temp-dir.js';

/*
 * The chain catches any single edit of a stream at the right record: random sessions (generated records, and the
 * golden logs' real ones), one random forgery each — a record's data changed (as it is, or relinked without the key),
 * a record deleted, two swapped, one inserted, records cut off the end — written around the store, and
 * `verifyChain` must name the first record concerned with the right verdict.
 */

const runs = propertyRuns(60);

const draftOf = fc
  .record({
    type: fc.constantFrom('user.message', 'model.responded', 'tool.settled', 'permission.decided', 'approval.requested', 'step.derived'),
    actor: fc.constantFrom('root', 'root/child-1'),
    corr: fc.option(fc.string({ minLength: 1, maxLength: 6 }), { nil: undefined }),
    at: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    data: fc.jsonValue({ maxDepth: 3 }),
  })
;
const session = fc.array(fc.array(draftOf, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 6 }).map((batches) => {
  let index = 0;
  return batches.map((batch) => batch.map((fields): RecordDraft => ({ id: `rec-${++index}`, v: 1, ...fields, ...(fields.corr === undefined ? {} : { corr: fields.corr }) }) as RecordDraft));
});

type Forgery = { kind: 'change' | 'relinked-change' | 'delete' | 'relinked-delete' | 'swap' | 'relinked-swap' | 'insert' | 'truncate'; at: number; count: number; data: unknown };
const forgery = fc.record({
  kind: fc.constantFrom('change', 'relinked-change', 'delete', 'relinked-delete', 'swap', 'relinked-swap', 'insert', 'truncate'),
  at: fc.nat(),
  count: fc.integer({ min: 1, max: 3 }),
  data: fc.jsonValue({ maxDepth: 2 }),
}) as fc.Arbitrary<Forgery>;

const sameRecord = (left: RecordEnvelope, right: RecordEnvelope): boolean => Buffer.from(canonicalRecordBytes(left)).equals(Buffer.from(canonicalRecordBytes(right)));

/** The forged entries and the verdict the check must give: the first record concerned and broken or unauthenticated. */
const apply = (entries: ChainEntry[], edit: Forgery): { forged: ChainEntry[]; seq: number; status: 'broken' | 'unauthenticated' } | undefined => {
  const n = entries.length;
  const at = edit.at % n;
  switch (edit.kind) {
    case 'change':
    case 'relinked-change': {
      const changed = changeRecord(entries, at, edit.data);
      if (sameRecord(changed[at]!.record, entries[at]!.record)) return undefined;
      return edit.kind === 'change' ? { forged: changed, seq: at + 1, status: 'broken' } : { forged: relinkFrom(changed, at), seq: at + 1, status: 'unauthenticated' };
    }
    case 'delete':
    case 'relinked-delete': {
      // Whatever is deleted, the stream now ends before its seal: broken, named at the first record concerned.
      const deleted = deleteRecord(entries, at);
      return { forged: edit.kind === 'delete' ? deleted : relinkFrom(deleted, at), seq: at + 1, status: 'broken' };
    }
    case 'swap':
    case 'relinked-swap': {
      if (n < 2) return undefined;
      const first = Math.min(at, n - 2);
      const swapped = swapRecords(entries, first);
      return edit.kind === 'swap' ? { forged: swapped, seq: first + 1, status: 'broken' } : { forged: relinkFrom(swapped, first), seq: first + 1, status: 'unauthenticated' };
    }
    case 'insert':
      return { forged: insertRecord(entries, at, { ...entries[at]!.record, id: 'planted', data: edit.data }), seq: at + 1, status: 'broken' };
    case 'truncate': {
      const count = Math.min(edit.count, n - 1);
      return { forged: truncate(entries, count), seq: n - count + 1, status: 'broken' };
    }
  }
};

const appendAll = async (store: EventStore, stream: string, batches: readonly RecordDraft[][]): Promise<void> => {
  let head = 0;
  for (const batch of batches) {
    await store.append(stream, batch, { expectedSeq: head });
    head += batch.length;
  }
};

let goldens: RecordDraft[][][] = [];
let parent: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  parent = await temporaryDirectory('rein-chain-prop-');
  const directory = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));
  for (const file of (await readdir(directory)).filter((name) => name.endsWith('.ndjson')).sort()) {
    const fixture = parseFixture(await readFile(join(directory, file), 'utf8'), file);
    // Appended in steps of up to 6 records, as a session writes them.
    const drafts = fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
    const batches: RecordDraft[][] = [];
    for (let start = 0; start < drafts.length; start += 6) batches.push(drafts.slice(start, start + 6));
    goldens.push(batches);
  }
});

afterAll(async () => {
  goldens = [];
  await parent.remove();
});

/** Data of any shape a store may be handed: special keys, -0, holes, nested arrays, byte arrays, Maps, big integers. */
const anyData = fc.oneof(
  fc.anything({ withBoxedValues: false, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withBigInt: true, withDate: true, withObjectString: true, maxDepth: 3 }),
  fc.constantFrom(JSON.parse('{"__proto__": {"polluted": 1}, "a": -0}'), { nested: [JSON.parse('{"__proto__": 2}')] }, -0, [undefined, , 1], new Uint8Array([1, 2])),
);

describe('the chain', () => {
  it('digests a record the way a read returns it: any data a store accepts stays authenticated, in memory and LevelDB', async () => {
    const root = join(parent.path, 'any-data');
    const level = await openLevelEventStore(root);
    const memory = createMemoryEventStore();
    let head = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(anyData, { minLength: 1, maxLength: 4 }), async (values) => {
          const batch = values.map((data, index): RecordDraft => ({ id: `any-${head + index}`, type: 'test.recorded', v: 1, at: 1, actor: 'root', data }));
          const accepted = await memory.append('s', batch, { expectedSeq: head }).then(
            () => true,
            (error: { code?: string }) => {
              if (error.code !== 'STORE_INVALID_ARGUMENT') throw error;
              return false;
            },
          );
          if (!accepted) return;
          await level.append('s', batch, { expectedSeq: head });
          head += batch.length;
          expect(await memory.verifyChain('s')).toMatchObject({ status: 'authenticated', head });
          expect(await level.verifyChain('s')).toMatchObject({ status: 'authenticated', head });
        }),
        { numRuns: runs },
      );
    } finally {
      await level.close();
      await memory.close();
    }
  });


  it('names the first record a single forgery touches, in the memory store', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(session, fc.nat().map((index) => goldens[index % goldens.length]!)), forgery, async (batches, edit) => {
        const storage = new MemoryStorage();
        const store = createMemoryEventStore({ storage });
        await appendAll(store, 's', batches);
        expect(await store.verifyChain('s')).toMatchObject({ status: 'authenticated', chainedFrom: 1 });
        const stored = storage.streams.get('s')!;
        const entries = (await store.read('s')).map((record, index) => ({ record, field: stored.chain[index] }));
        const expected = apply(entries, edit);
        if (expected === undefined) return;
        stored.records = expected.forged.map((entry) => encodeRecord(entry.record, 'compact'));
        stored.chain = expected.forged.map((entry) => entry.field);
        expect(await store.verifyChain('s')).toMatchObject({ status: expected.status, seq: expected.seq });
      }),
      { numRuns: runs },
    );
  });

  it('names the first record a single forgery touches, in the LevelDB store', async () => {
    let count = 0;
    await fc.assert(
      fc.asyncProperty(session, forgery, async (batches, edit) => {
        const root = join(parent.path, `store-${++count}`);
        const store = await openLevelEventStore(root);
        await appendAll(store, 's', batches);
        await store.close();
        const expected = apply(await levelRawChain(root, 's'), edit);
        if (expected === undefined) return;
        await levelForge(root, 's', expected.forged);
        const reopened = await openLevelEventStore(root, { readOnly: true });
        try {
          expect(await reopened.verifyChain('s')).toMatchObject({ status: expected.status, seq: expected.seq });
        } finally {
          await reopened.close();
        }
      }),
      { numRuns: Math.max(5, Math.floor(runs / 10)) },
    );
  });
});
