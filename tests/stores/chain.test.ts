import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lazySeal, sealTag, seqBytes } from '../../stores/chain.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import { propertyRuns } from '../support/temp-dir.js';

const bigEndian = (seq: number): Uint8Array => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(seq));
  return bytes;
};

describe('seals', () => {
  it('writes a seq as its u64 big-endian bytes, across the 32-bit boundary and up to the largest safe integer', () => {
    for (const seq of [0, 1, 255, 0xffff_ffff, 0x1_0000_0000, 0x1_0000_0001, Number.MAX_SAFE_INTEGER]) expect(seqBytes(seq), `seq ${seq}`).toEqual(bigEndian(seq));
    fc.assert(fc.property(fc.maxSafeNat(), (seq) => Buffer.from(seqBytes(seq)).equals(bigEndian(seq))), { numRuns: propertyRuns(200) });
  });

  it('a lazy seal tags what sealTag tags at the append, even when the predecessor it was given changes afterwards', async () => {
    const key = await randomChainKey();
    const predecessor = Uint8Array.from({ length: 12 }, (_, index) => index * 7);
    const expected = sealTag(key, 's-1', 42, predecessor);
    const seal = lazySeal(key, 's-1', 42, predecessor);
    predecessor[0] = 0xff;
    expect(seal.head).toBe(42);
    expect(Buffer.from(seal.tag).equals(Buffer.from(expected))).toBe(true);
    expect(seal.tag).toBe(seal.tag);
    // A copy (as a test or a tool would make one) carries the same tag.
    expect(Buffer.from({ ...seal }.tag).equals(Buffer.from(expected))).toBe(true);
  });
});
