import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { blake3Hex, loadBlake3 } from '../../src/util/blake3.js';
import { blake3LineTag, blake3Prefix8 } from '../../src/util/line-hash.js';
import { propertyRuns } from '../support/temp-dir.js';

describe('the JavaScript BLAKE3 used for line tags', () => {
  beforeAll(() => loadBlake3());

  it('equals the WebAssembly BLAKE3 on every input, short or long, ASCII or not', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 400 }), fc.string({ minLength: 900, maxLength: 1_200 })), (text) => {
        expect(blake3Prefix8(text)).toBe(blake3Hex(text).slice(0, 8));
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });

  it('tags a line as BLAKE3 of "<line_no>:<text>" for any line number', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), fc.string({ unit: 'grapheme', maxLength: 300 }), (lineNumber, text) => {
        expect(blake3LineTag(lineNumber, text)).toBe(blake3Hex(`${lineNumber}:${text}`).slice(0, 8));
      }),
      { numRuns: propertyRuns(1_000) },
    );
    expect(blake3LineTag(1, 'x'.repeat(1_100))).toBe(blake3Hex(`1:${'x'.repeat(1_100)}`).slice(0, 8));
  });

  it('matches at every block and chunk boundary', () => {
    for (const length of [0, 1, 63, 64, 65, 127, 128, 129, 1_023, 1_024, 1_025, 2_048]) {
      const text = 'a'.repeat(length);
      expect(blake3Prefix8(text)).toBe(blake3Hex(text).slice(0, 8));
    }
  });
});
