import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blake3Text } from '../../../machines/typestate/blake3.js';
import { canonicalJson, shareCanonical } from '../../../machines/typestate/canonical-json.js';
import { digestOf, multisetDigest, rowsDigest } from '../../../machines/typestate/digest.js';
import { propertyRuns } from '../../support/temp-dir.js';

const row = fc.record({ callId: fc.string({ unit: 'binary', maxLength: 12 }), name: fc.string({ maxLength: 8 }), size: fc.integer() }, { requiredKeys: ['callId'] });

const key = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('a', 'é', '😀', '\ud800', '"q"', 'back\\slash', 'callId'));
const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\ud83d', '\ude00', 'é', '€'), maxLength: 12 }), fc.nat({ max: 3_000 }).map((length) => 'x'.repeat(length)));
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, text, fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constant(null), fc.constant(undefined), tie('array'), tie('record')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  record: fc.dictionary(key, tie('value'), { maxKeys: 8 }),
}));

describe('digestOf', () => {
  it('is BLAKE3 of the canonical JSON text\u2019s UTF-8 bytes, for any value (written as bytes, never as a string)', () => {
    fc.assert(
      fc.property(value.filter((input) => input !== undefined), (input) => {
        expect(digestOf(input)).toBe(`b3:${blake3Text(canonicalJson(input))}`);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('digests a value holding shared (frozen) members as it digests an unshared copy', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.dictionary(key, text, { maxKeys: 6 }), { maxKeys: 4 }), text, (members, id) => {
        const copy = structuredClone(members);
        const shared = shareCanonical(members);
        expect(digestOf({ id, shared })).toBe(digestOf({ id, shared: copy }));
        expect(digestOf({ id, shared })).toBe(`b3:${blake3Text(canonicalJson({ id, shared: copy }))}`);
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('refuses what canonical JSON refuses', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, { nested: [Number.NEGATIVE_INFINITY] }, () => 1, 1n, Symbol('s')]) {
      expect(() => canonicalJson(bad)).toThrow(TypeError);
      expect(() => digestOf(bad)).toThrow(TypeError);
    }
    expect(digestOf('after a refusal')).toBe(`b3:${blake3Text('"after a refusal"')}`);
  });
});

describe('multiset and row digests', () => {
  it('a multiset digest is the digest of its members\u2019 sorted digests, whatever their order', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), (rows) => {
        const expected = digestOf(rows.map((member) => digestOf(member)).sort());
        expect(multisetDigest(rows)).toBe(expected);
        expect(multisetDigest([...rows].reverse())).toBe(expected);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('a row list\u2019s digest is its multiset digest, asked once or many times, after more lists than it remembers', () => {
    fc.assert(
      fc.property(fc.array(fc.array(row, { maxLength: 3 }), { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { maxLength: 60 }), (lists, picks) => {
        for (const list of lists) expect(rowsDigest(list)).toBe(multisetDigest(list));
        for (const pick of picks) {
          const list = lists[pick % lists.length]!;
          expect(rowsDigest(list)).toBe(multisetDigest(list));
        }
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
