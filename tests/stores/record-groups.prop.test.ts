import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { encodeFramed } from '../../stores/record-codec.js';
import { decodeRecord, encodeRecord, prepareEnvelopes } from '../../stores/record-drafts.js';
import { GROUP_RECORD_FORMAT_BYTE, MAX_GROUP_RECORDS, decodeStoredValue, encodeGroups, nextId } from '../../stores/record-groups.js';
import { temporaryDirectory } from './store-test-support.js';

const runs = Number(process.env.FC_RUNS ?? 50);

/** Ids as rein makes them (a prefix and a counter, often consecutive) and others. */
const idRun = fc.tuple(fc.constantFrom('7h0KZtLm', 'ab_-CD12', 'x'), fc.nat({ max: 50_000 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), fc.array(fc.string({ minLength: 1, maxLength: 9 }), { maxLength: 12 })).map(([prefix, start, consecutive, others]) => {
  let counter = start;
  return consecutive.map((next, index) => (next || others[index] === undefined ? `${prefix}${(counter++).toString(36)}` : others[index]!));
});
const time = fc.oneof(fc.constantFrom(1_795_714_309_403, 0, -5, 2 ** 53 - 1, -(2 ** 53) + 1), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
const digest = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }).map((hex) => `b3:${hex}`);
const data = fc.option(fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(digest, fc.jsonValue()))), { nil: undefined });

/** A batch of drafts whose causes point into the batch, outside it, or nowhere. */
const batch = idRun.chain((ids) =>
  fc.tuple(
    fc.constant(ids),
    fc.array(fc.tuple(time, fc.oneof(fc.constant(undefined), fc.nat({ max: ids.length - 1 }).map((index) => ids[index]!), fc.string({ minLength: 1, maxLength: 6 })), fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), data, fc.constantFrom('root', 'root/turn-1')), { minLength: ids.length, maxLength: ids.length }),
  ).map(([ids, rest]): RecordDraft[] => ids.map((id, index) => {
    const [at, cause, corr, value, actor] = rest[index]!;
    // A draft without `data` (the envelope's data is optional; the draft type asks for the key).
    return { id, type: 'turn.results', v: 1, at, actor, ...(cause === undefined ? {} : { cause }), ...(corr === undefined ? {} : { corr }), ...(value === undefined ? {} : { data: value }) } as RecordDraft;
  })),
);

/** What the per-record (compact) layout gives back for an envelope: the reference a group must equal. */
const viaCompact = (envelope: RecordEnvelope): RecordEnvelope => decodeRecord(encodeRecord(envelope, 'compact'), envelope.stream, envelope.seq);

describe('stored groups', () => {
  it('give back exactly the envelopes appended, key order included, like the per-record layouts', async () => {
    await fc.assert(
      fc.asyncProperty(batch, fc.integer({ min: 1, max: 2 ** 40 }), async (drafts, firstSeq) => {
        const envelopes = prepareEnvelopes('prop', firstSeq, drafts);
        const groups = await encodeGroups(envelopes);
        const decoded = groups.flatMap((group) => decodeStoredValue(group.value, 'prop', group.lastSeq).map((entry) => entry.record));
        expect(decoded.map((record) => JSON.stringify(record))).toEqual(envelopes.map((envelope) => JSON.stringify(viaCompact(envelope))));
        expect(decoded.map((record) => Object.keys(record))).toEqual(envelopes.map((envelope) => Object.keys(envelope)));
      }),
      { numRuns: runs * 10 },
    );
  }, 120_000);

  it('make the id that follows a generated one, and nothing for any other', () => {
    expect(nextId('7h0KZtLm1b')).toBe('7h0KZtLm1c');
    expect(nextId('7h0KZtLmz')).toBe('7h0KZtLm10');
    for (const other of ['short', '7h0KZtLm01', '7h0KZtLm-', '7h0KZtLmA', 'r-1']) expect(nextId(other)).toBeUndefined();
  });

  it('split a long append at MAX_GROUP_RECORDS, each group under its last seq', async () => {
    const drafts = Array.from({ length: MAX_GROUP_RECORDS * 2 + 3 }, (_, index): RecordDraft => ({ id: `id${index}`, type: 'test.recorded', v: 1, at: index, actor: 'root', data: index }));
    const groups = await encodeGroups(prepareEnvelopes('prop', 10, drafts));
    expect(groups.map((group) => group.lastSeq)).toEqual([9 + MAX_GROUP_RECORDS, 9 + 2 * MAX_GROUP_RECORDS, 9 + 2 * MAX_GROUP_RECORDS + 3]);
  });

  it('refuse any value that is not a well-formed group with STORE_CORRUPT_RECORD, never another error', () => {
    const row = fc.oneof(fc.jsonValue(), fc.tuple(fc.option(fc.string(), { nil: null }), fc.string(), fc.integer(), fc.oneof(fc.integer(), fc.tuple(fc.double())), fc.string(), fc.oneof(fc.constant(null), fc.string(), fc.integer({ min: -1, max: 4 })), fc.option(fc.string(), { nil: null })));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.tuple(fc.integer({ min: -2, max: 8 }), fc.array(row, { maxLength: 4 }))), fc.integer({ min: 0, max: 8 }), (value, keySeq) => {
        let decoded: ReturnType<typeof decodeStoredValue>;
        try {
          decoded = decodeStoredValue(encodeFramed(GROUP_RECORD_FORMAT_BYTE, value), 'prop', keySeq);
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_CORRUPT_RECORD' });
          return;
        }
        expect(decoded.at(-1)!.record.seq).toBe(keySeq);
        for (const { record } of decoded) expect([typeof record.id, typeof record.type, typeof record.at, typeof record.actor]).toEqual(['string', 'string', 'number', 'string']);
      }),
      { numRuns: runs * 20 },
    );
  });
});

describe('a LevelDB stream stored in groups', () => {
  let parent: { path: string; remove(): Promise<void> };
  let counter = 0;
  beforeAll(async () => {
    parent = await temporaryDirectory('rein-groups-');
  });
  afterAll(async () => {
    await parent.remove();
  });

  it('reads every range (forward, reverse, limited) exactly, however the appends split the stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.record({ from: fc.nat({ max: 40 }), to: fc.nat({ max: 40 }), limit: fc.option(fc.nat({ max: 12 }), { nil: undefined }), reverse: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        async (sizes, reads) => {
          const store = await openLevelEventStore(`${parent.path}/store-${++counter}`);
          try {
            let head = 0;
            for (const size of sizes) {
              const drafts = Array.from({ length: size }, (_, index): RecordDraft => ({ id: `7h0KZtLm${(head + index).toString(36)}`, type: 'test.recorded', v: 1, at: 1_000 + head + index, actor: 'root', ...(index > 0 ? { cause: `7h0KZtLm${head.toString(36)}` } : {}), data: { seq: head + index + 1 } }));
              await store.append('s', drafts, { expectedSeq: head });
              head += size;
            }
            const all = await store.read('s');
            expect(all.map((record) => record.seq)).toEqual(Array.from({ length: head }, (_, index) => index + 1));
            for (const options of reads) {
              const got = await store.read('s', options);
              const inRange = all.filter((record) => record.seq >= Math.max(options.from, 1) && record.seq <= Math.min(options.to, head));
              const ordered = options.reverse ? [...inRange].reverse() : inRange;
              expect(got).toEqual(options.limit === undefined ? ordered : ordered.slice(0, options.limit));
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: runs },
    );
  }, 120_000);
});
