import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, quoteJson, shareCanonical } from '../../../machines/typestate/canonical-json.js';
import { propertyRuns } from '../../support/temp-dir.js';

/** The definition canonical JSON follows, written the plain way: keys by the builtin sort, `undefined` members left out. */
const reference = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : reference(item))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${reference(record[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
};

// Keys that sort differently by code unit than by locale or by code point (astral characters, case, digits, prefixes).
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('a', 'A', 'aa', 'a0', '_', 'Z', 'é', 'ﬀ', '😀', '\u{10000}', '\uffff', '10', '9', 'callId', 'callSpec'));
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null), fc.constant(undefined), tie('array'), tie('record'), tie('wide')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  record: fc.dictionary(key, tie('value'), { maxKeys: 8 }),
  // Past the insertion sort's size (24 keys): the builtin sort takes over.
  wide: fc.dictionary(key, fc.oneof(fc.string(), fc.integer()), { minKeys: 20, maxKeys: 40 }),
}));

describe('canonicalJson', () => {
  it('orders keys by UTF-16 code units at every size and leaves undefined members out, as the plain definition does', () => {
    fc.assert(
      fc.property(value.filter((input) => input !== undefined), (input) => {
        expect(canonicalJson(input)).toBe(reference(input));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('quotes every string and writes every finite number exactly as JSON.stringify does (controls, quotes, lone and paired surrogates, -0)', () => {
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\ud83d', '\ude00', '😀', '\u2028', 'é'), maxLength: 20 }));
    fc.assert(
      fc.property(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), (string, number, flag) => {
        expect(quoteJson(string)).toBe(JSON.stringify(string));
        expect(canonicalJson({ string, number, flag, list: [string, -0, number] })).toBe(reference({ string, number, flag, list: [string, -0, number] }));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('orders long key lists seen before (the same keys, the same or another insertion order) as it orders them the first time', () => {
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 8, maxLength: 20 }), fc.array(fc.tuple(fc.nat(), fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 30 }), (keys, rounds) => {
        for (const [rotation, text] of rounds) {
          const order = [...keys.slice(rotation % keys.length), ...keys.slice(0, rotation % keys.length)];
          const record = Object.fromEntries(order.map((name, index) => [name, index % 3 === 0 ? undefined : `${text}${index}`]));
          expect(canonicalJson(record)).toBe(reference(record));
          expect(canonicalJson({ wrapped: [record, record] })).toBe(reference({ wrapped: [record, record] }));
        }
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('gives a shared (frozen) value the same text it gives an unshared copy', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.dictionary(key, fc.string(), { maxKeys: 30 }), { maxKeys: 6 }), (input) => {
        const copy = structuredClone(input);
        expect(canonicalJson({ wrapper: shareCanonical(input) })).toBe(reference({ wrapper: copy }));
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
