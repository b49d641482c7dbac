import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestOf, multisetDigest, rowsDigest } from '../../../machines/typestate/digest.js';
import { propertyRuns } from '../../support/temp-dir.js';

const row = fc.record({ callId: fc.string({ unit: 'binary', maxLength: 12 }), name: fc.string({ maxLength: 8 }), size: fc.integer() }, { requiredKeys: ['callId'] });

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
