import fc from 'fast-check';
import { createBLAKE3 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { blake3, blake3LineTag, blake3Prefix8, blake3Text } from '../../../machines/typestate/blake3.js';
import { Blake3Stream, blake3KeyWords, blake3KeyedShort } from '../../../models/blake3.js';
import { propertyRuns } from '../../support/temp-dir.js';

describe('pure BLAKE3', () => {
  it('matches the official test vector for the empty input and "abc"', () => {
    expect(blake3(new Uint8Array())).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(blake3Text('abc')).toBe('6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
  });

  it('agrees with hash-wasm on every size class, including chunk and tree boundaries', async () => {
    const reference = await createBLAKE3();
    const sizes = [0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 2049, 3072, 4096, 5000, 8192, 9000, 31744, 65537];
    for (const size of sizes) {
      const bytes = Uint8Array.from({ length: size }, (_, index) => (index * 31 + 7) & 0xff);
      reference.init();
      reference.update(bytes);
      expect(blake3(bytes), `size ${size}`).toBe(reference.digest('hex'));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6000 }), (bytes) => {
        reference.init();
        reference.update(bytes);
        return blake3(bytes) === reference.digest('hex');
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('hashes a text as its UTF-8 bytes, short or long, with lone surrogates as U+FFFD (as Buffer writes them)', () => {
    const unit = fc.oneof(fc.constantFrom('a', 'é', '…', '\ud83d', '\ude00', '\ud83d\ude00'), fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), fc.string({ maxLength: 40 }));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 120 }), fc.nat(99_999), (units, line) => {
        const text = units.join('');
        const expected = blake3(Buffer.from(text, 'utf8'));
        expect(blake3Text(text)).toBe(expected);
        expect(blake3Prefix8(text, 'p:')).toBe(blake3(Buffer.from(`p:${text}`, 'utf8')).slice(0, 8));
        expect(blake3LineTag(line, text)).toBe(blake3(Buffer.from(`${line}:${text}`, 'utf8')).slice(0, 8));
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe('incremental BLAKE3 (Blake3Stream)', () => {
  const bytesOf = (size: number, seed = 7): Uint8Array => Uint8Array.from({ length: size }, (_, index) => (index * 31 + seed) & 0xff);

  it('equals the one-shot hash at every size class, fed whole or byte by byte', () => {
    for (const size of [0, 1, 63, 64, 65, 127, 128, 1023, 1024, 1025, 2047, 2048, 2049, 3072, 4096, 5000, 8192, 9000, 17408, 65537]) {
      const bytes = bytesOf(size);
      expect(new Blake3Stream().update(bytes).hex(), `size ${size}`).toBe(blake3(bytes));
      if (size <= 5000) {
        const stream = new Blake3Stream();
        for (let index = 0; index < size; index++) stream.update(bytes, index, index + 1);
        expect(stream.hex(), `size ${size} byte by byte`).toBe(blake3(bytes));
      }
    }
  });

  it('equals the one-shot hash for any split, and a copy of a state hashes its continuations as the original would', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 9000 }), fc.array(fc.nat(), { maxLength: 6 }), fc.uint8Array({ maxLength: 2100 }), (bytes, cuts, more) => {
        const stream = new Blake3Stream();
        const points = [...cuts.map((cut) => cut % (bytes.length + 1)), 0, bytes.length].sort((left, right) => left - right);
        for (let index = 1; index < points.length; index++) stream.update(bytes, points[index - 1], points[index]);
        expect(stream.hex()).toBe(blake3(bytes));
        // hex() leaves the state as it was: hashing on gives the hash of the whole.
        expect(stream.hex()).toBe(blake3(bytes));
        const copy = new Blake3Stream().update(bytesOf(3000, 1)).copyFrom(stream);
        const joined = new Uint8Array(bytes.length + more.length);
        joined.set(bytes);
        joined.set(more, bytes.length);
        expect(copy.update(more).hex()).toBe(blake3(joined));
        expect(stream.hex()).toBe(blake3(bytes));
        expect(stream.reset().update(more).hex()).toBe(blake3(more));
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('keyed BLAKE3 of one block (blake3KeyedShort)', () => {
  it('is hash-wasm\u2019s keyed BLAKE3 for every input length up to a block, any key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 1, max: 32 }), async (key, input, count) => {
        const expected = (await createBLAKE3(256, key)).init().update(input).digest('binary').subarray(0, count);
        const target = new Uint8Array(count + 3).fill(5);
        blake3KeyedShort(blake3KeyWords(key), input, target, 3, count);
        expect(Buffer.from(target.subarray(3))).toEqual(Buffer.from(expected));
        expect([...target.subarray(0, 3)]).toEqual([5, 5, 5]);
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
