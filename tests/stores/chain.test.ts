import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sealTag, seqBytes } from '../../stores/chain.js';
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

  it('a seal tags its stream\u2019s name, head and predecessor: each changes the tag, and the same inputs give the same tag', async () => {
    const key = await randomChainKey();
    const predecessor = Uint8Array.from({ length: 12 }, (_, index) => index * 7);
    const tag = sealTag(key, 's-1', 42, predecessor);
    expect(tag.length).toBe(16);
    expect(Buffer.from(sealTag(key, 's-1', 42, predecessor.slice())).equals(Buffer.from(tag))).toBe(true);
    expect(Buffer.from(sealTag(key, 's-2', 42, predecessor)).equals(Buffer.from(tag))).toBe(false);
    expect(Buffer.from(sealTag(key, 's-1', 43, predecessor)).equals(Buffer.from(tag))).toBe(false);
    expect(Buffer.from(sealTag(key, 's-1', 42, Uint8Array.from(predecessor, (byte) => byte ^ 1))).equals(Buffer.from(tag))).toBe(false);
    expect(Buffer.from(sealTag(await randomChainKey(), 's-1', 42, predecessor)).equals(Buffer.from(tag))).toBe(false);
  });
});
