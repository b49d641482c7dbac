import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChainKey } from '../../stores/chain-crypto.js';
import { canonicalSnapshot, checkedSnapshot, encodeTaggedSnapshot } from '../../stores/chain-snapshots.js';
import { decodeValue, encodeValue } from '../../stores/record-codec.js';
import { propertyRuns } from '../support/temp-dir.js';

/** What a snapshot's canonical bytes were defined as: encoded, decoded and encoded again (the form a load gives back). */
const readBack = (snapshot: { seq: number; version: string; at: number; data: unknown }): Uint8Array => {
  const { seq, version, at, data } = snapshot;
  return encodeValue(decodeValue(encodeValue({ seq, version, at, data }), { stream: 'snapshot' }));
};

const awkward = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom<unknown>(-0, 2 ** 40, -(2 ** 40), 1.5, '\ud83d', { __proto__: null, a: 1 }, JSON.parse('{"__proto__":{"x":1},"b":2}'), { a: undefined, b: [1, 2] }, new Map([['k', 1]]), Uint8Array.of(1, 2, 3)),
);

describe('snapshot canonical bytes', () => {
  it('are the bytes a load gives back, encoded: plain data in one encoding, anything else encoded, decoded and encoded again', () => {
    fc.assert(
      fc.property(fc.nat(), fc.string({ maxLength: 8 }), fc.nat(), fc.dictionary(fc.string({ maxLength: 12 }), awkward, { maxKeys: 6 }), (seq, version, at, data) => {
        expect(Buffer.from(canonicalSnapshot({ seq, version, at, data })).equals(Buffer.from(readBack({ seq, version, at, data })))).toBe(true);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('the stored bytes of a tagged snapshot are what encoding its fields and its tag writes, and they load back authenticated', async () => {
    const key = await ChainKey.create(Buffer.alloc(32, 7));
    const field = Buffer.alloc(12, 3);
    fc.assert(
      fc.property(fc.nat(), fc.string({ maxLength: 8 }), fc.nat(), fc.dictionary(fc.string({ maxLength: 12 }), awkward, { maxKeys: 6 }), (seq, version, at, data) => {
        const snapshot = { seq, version, at, data };
        const stored = encodeTaggedSnapshot(key, 's-1', snapshot, field);
        const tag = (decodeValue(stored, { stream: 's-1' }) as { tag: Uint8Array }).tag;
        expect(Buffer.from(stored).equals(Buffer.from(encodeValue({ seq, version, at, data, tag })))).toBe(true);
        expect(checkedSnapshot(key, 's-1', decodeValue(stored, { stream: 's-1' }), field).authenticated).toBe(true);
        expect(checkedSnapshot(key, 's-1', decodeValue(stored, { stream: 's-1' }), Buffer.alloc(12, 4)).authenticated).toBe(false);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
