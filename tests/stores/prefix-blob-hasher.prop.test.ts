import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blake3Hex, namedDigestOf } from '../../stores/blob-hash.js';
import { PrefixBlobHasher } from '../../stores/prefix-blob-hasher.js';
import { propertyRuns } from '../support/temp-dir.js';

/** Text pieces: ASCII, multi-byte characters, lone surrogates, long runs (past the scratch's first size). */
const piece = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('\ud800', 'x\udfff', 'é', '😀', ','),
  fc.nat({ max: 3_000 }).map((length) => 'a'.repeat(length)),
);

/** One round: how many of the last round's pieces it keeps, how many it changes or adds, and how many it calls stable. */
const round = fc.record({ kept: fc.nat({ max: 40 }), added: fc.array(piece, { maxLength: 6 }), stableShare: fc.double({ min: 0, max: 1, noNaN: true }) });

describe('PrefixBlobHasher', () => {
  it('for any sequence of blobs sharing prefixes (grown, cut, changed): the bytes and digest of a plain hashBlob of the joined text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(round, { minLength: 1, maxLength: 12 }), async (rounds) => {
        const hasher = new PrefixBlobHasher();
        let pieces: string[] = [];
        for (const { kept, added, stableShare } of rounds) {
          // A new array each round; the kept pieces are the same strings (as a history's kept JSON is).
          pieces = [...pieces.slice(0, kept), ...added];
          const stable = Math.floor(stableShare * (pieces.length + 1));
          const text = pieces.join('');
          const expected = Buffer.from(text, 'utf8');
          const { bytes, hex } = await hasher.hash(pieces, stable);
          expect(Buffer.from(bytes).equals(expected)).toBe(true);
          expect(hex).toBe(await blake3Hex(expected));
          expect(namedDigestOf(bytes)).toBe(hex);
        }
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('a stable piece replaced by an equal string in another object keeps the prefix; one with other text restarts it', async () => {
    const hasher = new PrefixBlobHasher();
    const head = 'h'.repeat(5_000);
    const first = await hasher.hash([head, 'é', 'tail'], 2);
    expect(first.hex).toBe(await blake3Hex(Buffer.from(`${head}étail`)));
    const same = await hasher.hash([`${'h'.repeat(4_999)}h`, 'é', 'x', 'tail2'], 3);
    expect(same.hex).toBe(await blake3Hex(Buffer.from(`${head}éxtail2`)));
    const changed = await hasher.hash(['other', 'é', 'x'], 3);
    expect(changed.hex).toBe(await blake3Hex(Buffer.from('otheréx')));
    // The returned arrays are the caller's: a later call does not write to them.
    expect(Buffer.from(first.bytes).toString()).toBe(`${head}étail`);
  });
});
