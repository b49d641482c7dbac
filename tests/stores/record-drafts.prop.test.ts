import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordEnvelope } from '../../models/envelope.js';
import type { RecordDraft } from '../../models/envelope.js';
import { COMPACT_RECORD_FORMAT_BYTE, PACKED_RECORD_FORMAT_BYTE, encodeFramed } from '../../stores/record-codec.js';
import { decodeRecord, encodeRecord, prepareBatch } from '../../stores/record-drafts.js';

const runs = Number(process.env.FC_RUNS ?? 50);

const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 6 }), fc.constantFrom('root', 'root/child-2'));
const typeName = fc.oneof(
  fc.constantFrom('tool.settled', 'actor.transitioned', 'a.b.c', 'tool-call.started', 'Tool.settled', 'tool', 'tool.', '.tool', 'tool..x', '1tool.x', 'tool.x-1'),
  fc.string({ maxLength: 8 }),
);
const number = fc.oneof(
  fc.integer({ min: -2, max: 3 }),
  fc.constantFrom(1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1_700_000_000_000),
  fc.double(),
);
const optionalText = fc.option(text, { nil: undefined });
const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<T | number | null | undefined> =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, 7) });

const draftLike = fc.record({
  id: field(text),
  type: field(typeName),
  v: number,
  at: number,
  actor: field(text),
  cause: field(optionalText),
  corr: field(optionalText),
  data: fc.jsonValue(),
});

describe('prepareBatch validation', () => {
  it('accepts exactly the drafts the RecordEnvelope schema accepts', () => {
    fc.assert(
      fc.property(draftLike, (candidate) => {
        const accepted = RecordEnvelope.safeParse({ ...candidate, stream: 'prop', seq: 1 }).success;
        let prepared = true;
        try {
          prepareBatch('prop', 1, [candidate as RecordDraft]);
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
          prepared = false;
        }
        expect(prepared).toBe(accepted);
      }),
      { numRuns: runs * 20 },
    );
  }, 120_000);
});

describe('record layouts', () => {
  it('decode to the same envelope, key order included, whichever layout stored it', () => {
    fc.assert(
      fc.property(draftLike, fc.integer({ min: 1, max: 2 ** 40 }), (candidate, seq) => {
        if (!RecordEnvelope.safeParse({ ...candidate, stream: 'prop', seq }).success) return;
        const [envelope] = prepareBatch('prop', seq, [candidate as RecordDraft]).envelopes;
        const compact = decodeRecord(encodeRecord(envelope!, 'compact'), 'prop', seq);
        const packed = decodeRecord(encodeRecord(envelope!, 'packed'), 'prop', seq);
        const whole = decodeRecord(encodeRecord(envelope!, 'envelope'), 'prop', seq);
        expect(compact).toStrictEqual(whole);
        expect(packed).toStrictEqual(whole);
        expect(Object.keys(compact)).toEqual(Object.keys(whole));
        expect(JSON.stringify(compact)).toBe(JSON.stringify(envelope));
        expect(JSON.stringify(packed)).toBe(JSON.stringify(envelope));
      }),
      { numRuns: runs * 20 },
    );
  }, 120_000);

  it('packed rows give back every digest-like string exactly, and are shorter by each digest they pack', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 62, maxLength: 66 });
    const digestLike = fc.tuple(fc.constantFrom('b3:', 'sha256:', 'artifact://blake3/', 'b3', 'artifact://blake3', 'x:'), hex).map(([prefix, digits]) => prefix + digits);
    const data = fc.jsonValue().chain((base) => fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(digestLike, fc.array(digestLike, { maxLength: 3 }), fc.constant(base))));
    fc.assert(
      fc.property(data, (value) => {
        const [envelope] = prepareBatch('prop', 1, [{ id: 'i', type: 'turn.join-closed', v: 1, at: 1, actor: 'root', data: value }]).envelopes;
        const packed = decodeRecord(encodeRecord(envelope!, 'packed'), 'prop', 1);
        // The same as the compact layout gives back (both share msgpackr's `__proto__` guard, see record-codec.ts).
        expect(JSON.stringify(packed)).toBe(JSON.stringify(decodeRecord(encodeRecord(envelope!, 'compact'), 'prop', 1)));
        if (!JSON.stringify(value).includes('__proto__')) expect(JSON.stringify(packed)).toBe(JSON.stringify(envelope));
        expect(encodeRecord(envelope!, 'packed').length).toBeLessThanOrEqual(encodeRecord(envelope!, 'compact').length);
      }),
      { numRuns: runs * 20 },
    );
  });

  it('refuse a compact or packed value that is not a record row with STORE_CORRUPT_RECORD, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(fc.jsonValue(), { minLength: 7, maxLength: 10 })), fc.constantFrom(COMPACT_RECORD_FORMAT_BYTE, PACKED_RECORD_FORMAT_BYTE), (value, format) => {
        let decoded: unknown;
        try {
          decoded = decodeRecord(encodeFramed(format, value), 'prop', 3);
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_CORRUPT_RECORD', seq: 3 });
          return;
        }
        // Whatever decodes has the envelope's field types (a row is only accepted with them).
        const record = decoded as Record<string, unknown>;
        expect([typeof record.seq, typeof record.id, typeof record.type, typeof record.v, typeof record.at, typeof record.actor]).toEqual(['number', 'string', 'string', 'number', 'number', 'string']);
        expect(record.stream).toBe('prop');
      }),
      { numRuns: runs * 20 },
    );
  });
});
