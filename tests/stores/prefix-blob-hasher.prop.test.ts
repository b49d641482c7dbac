import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blake3Hex, namedDigestOf } from '../../stores/blob-hash.js';
import { PrefixBlobHasher, type BlobPiece } from '../../stores/prefix-blob-hasher.js';
import { propertyRuns } from '../support/temp-dir.js';

/** Text pieces: ASCII, multi-byte characters, lone surrogates, single separators, long runs (past the buffers' first size). */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('\ud800', 'x\udfff', 'é', '😀', ',', ''),
  fc.nat({ max: 3_000 }).map((length) => 'a'.repeat(length)),
);

const joined = (pieces: readonly BlobPiece[]): string => pieces.map((piece) => (typeof piece === 'string' ? piece : piece.parts.slice(0, piece.count).join(piece.separator))).join('');

/**
 * One round: how many of the last round's head texts it keeps and which it adds; whether the growing list (a
 * history) gets new parts, is cut (a new array, as a compaction makes) or is shown shorter than before; the tail; and
 * how many pieces are called stable.
 */
const round = fc.record({
  kept: fc.nat({ max: 6 }),
  added: fc.array(text, { maxLength: 3 }),
  list: fc.oneof(fc.record({ grow: fc.array(text, { maxLength: 4 }) }), fc.record({ cut: fc.nat({ max: 5 }) }), fc.record({ shorter: fc.nat({ max: 3 }) })),
  tail: fc.array(text, { maxLength: 3 }),
  stableShare: fc.double({ min: 0, max: 1, noNaN: true }),
});

describe('PrefixBlobHasher', () => {
  it('for any sequence of blobs sharing prefixes (grown, cut, changed): the bytes and digest of a plain hashBlob of the joined text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(round, { minLength: 1, maxLength: 12 }), fc.constantFrom(',', '', ';;'), async (rounds, separator) => {
        const hasher = new PrefixBlobHasher();
        let head: string[] = [];
        let parts: string[] = [];
        let count = 0;
        for (const { kept, added, list, tail, stableShare } of rounds) {
          // A new array each round; the kept texts are the same strings (as a history's kept JSON is).
          head = [...head.slice(0, kept), ...added];
          if ('grow' in list) {
            parts.push(...list.grow);
            count = parts.length;
          } else if ('cut' in list) {
            parts = parts.slice(0, Math.min(list.cut, parts.length));
            count = parts.length;
          } else count = Math.max(0, count - list.shorter);
          const pieces: BlobPiece[] = [...head, { parts, count, separator }, ...tail];
          const stable = Math.floor(stableShare * (pieces.length + 1));
          const expected = Buffer.from(joined(pieces), 'utf8');
          const { bytes, hex } = await hasher.hash(pieces, stable);
          expect(Buffer.from(bytes).equals(expected)).toBe(true);
          expect(hex).toBe(await blake3Hex(expected));
          expect(namedDigestOf(bytes)).toBe(hex);
        }
      }),
      { numRuns: propertyRuns(150) },
    );
  });

  it('a stable text replaced by an equal string in another object keeps the prefix; one with other text restarts it', async () => {
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

  it('hashers called at once (each agent has one; the bytes after the prefix are written to one shared buffer) each give their own blob', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.array(text, { minLength: 1, maxLength: 4 }), fc.array(text, { maxLength: 4 })), { minLength: 2, maxLength: 6 }), async (inputs) => {
        const hashers = inputs.map(() => new PrefixBlobHasher());
        for (let round = 0; round < 2; round++) {
          const results = await Promise.all(inputs.map(([head, tail], index) => hashers[index]!.hash([...head, ...tail, String(round)], head.length)));
          for (const [index, [head, tail]] of inputs.entries()) {
            const expected = Buffer.from([...head, ...tail, String(round)].join(''), 'utf8');
            expect(Buffer.from(results[index]!.bytes).equals(expected)).toBe(true);
            expect(results[index]!.hex).toBe(await blake3Hex(expected));
          }
        }
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('agents whose inputs start alike (a session’s shared system head) each get their own blob, the head changed or not', async () => {
    const head = `{"role":"system","content":"${'r'.repeat(3_000)}é`;
    const other = `${head.slice(0, -1)}ü`;
    const cases: Array<[BlobPiece[], number]> = [
      [['{"messages":[', head, 'task a"}', '],"tools":[]}'], 3],
      [['{"messages":[', head, 'task b"}', '],"tools":[]}'], 3],
      [['{"messages":[', other, 'task a"}', '],"tools":[]}'], 3],
      [['{"messages":[', head, 'task c"}', ',{"x":1}', '],"tools":[]}'], 2],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [pieces, stable] of cases) {
        const hasher = new PrefixBlobHasher();
        for (const next of [pieces, [...pieces.slice(0, stable), 'then', ...pieces.slice(stable)]]) {
          const expected = Buffer.from(joined(next), 'utf8');
          const { bytes, hex } = await hasher.hash(next, stable);
          expect(Buffer.from(bytes).equals(expected)).toBe(true);
          expect(hex).toBe(await blake3Hex(expected));
        }
      }
    }
  });
});
