import fc from 'fast-check';
import { createBLAKE3 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { blake3, blake3LineTag, blake3Prefix8, blake3Text } from '../../../machines/typestate/blake3.js';
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
