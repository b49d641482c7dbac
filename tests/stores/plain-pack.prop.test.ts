import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { RECORD_CODEC_OPTIONS, RECORD_FORMAT_BYTE, decodeValue, encodeValue } from '../../stores/index.js';
import { ExtensionScope, packPlain, packedProtoKey } from '../../stores/plain-pack.js';
import { packDigests, packPlainDigests } from '../../stores/packed-digests.js';

const runs = Number(process.env.FC_RUNS ?? 50);
const pinned = new Packr({ ...RECORD_CODEC_OPTIONS });

/** Strings of every width: ASCII, two- and three-byte UTF-8, surrogate pairs, lone surrogates, and long ones. */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)), maxLength: 8 }),
  fc.string({ unit: 'grapheme', minLength: 20, maxLength: 400 }),
  fc.string({ unit: 'binary', minLength: 60, maxLength: 30_000 }),
  fc.integer({ min: 0, max: 70_000 }).map((length) => 'é'.repeat(length)),
);

const numbers = fc.oneof(
  fc.integer(),
  fc.integer({ min: -200, max: 300 }),
  fc.double(),
  fc.constantFrom(0, -0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32, -(2 ** 31), -(2 ** 31) - 1, 2 ** 53, Number.NaN, Infinity, -Infinity),
);

/** JSON-like data, with `undefined` map values (skipped by the codec), many keys, wide arrays and odd keys. */
const plain = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    numbers,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 20 }),
    fc.dictionary(fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'toString')), fc.option(tie('value'), { nil: undefined }), { maxKeys: 20 }),
  ),
})).value;

describe('packPlain', () => {
  it('writes exactly the bytes the pinned msgpackr writes, for any plain value', () => {
    fc.assert(
      fc.property(plain, (value) => {
        const written = packPlain(value, 0);
        if (written === undefined) return;
        expect(Buffer.from(written).equals(Buffer.from(pinned.pack(value)))).toBe(true);
      }),
      { numRuns: runs * 20 },
    );
  });

  it('frames the same bytes as msgpackr, and decodes them back, through encodeValue', () => {
    fc.assert(
      fc.property(plain, (value) => {
        const stored = encodeValue(value);
        expect(Buffer.from(stored.subarray(5)).equals(Buffer.from(pinned.pack(value)))).toBe(true);
        expect(decodeValue(stored, { stream: 's', seq: 1 })).toEqual(pinned.unpack(pinned.pack(value)));
      }),
      { numRuns: runs * 10 },
    );
  });

  it('covers the container and string size boundaries', () => {
    const sizes = [0, 15, 16, 31, 32, 255, 256, 65_535, 65_536];
    for (const size of sizes) {
      const array = Array.from({ length: size }, (_, index) => index);
      const map = Object.fromEntries(Array.from({ length: size }, (_, index) => [`k${index}`, index % 3 === 0 ? undefined : index]));
      for (const value of [array, map, 'a'.repeat(size), 'é'.repeat(size), '€'.repeat(size), { nested: [map] }]) {
        expect(Buffer.from(packPlain(value, 0)!).equals(Buffer.from(pinned.pack(value)))).toBe(true);
      }
    }
  });

  it('leaves what is not plain data to msgpackr, which still encodes or refuses it as before', () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const deep = Array.from({ length: 300 }).reduce<unknown>((inner) => [inner], 1);
    const overridden = { hasOwnProperty: 1, value: 2 };
    for (const value of [new Point(1), new Map([['a', 1]]), new Uint8Array([1, 2]), [1, undefined], undefined, new Date(0), deep, overridden, { list: [new Set([1])] }]) {
      expect(packPlain(value, 0)).toBeUndefined();
      expect(Buffer.from(encodeValue(value).subarray(5)).equals(Buffer.from(pinned.pack(value)))).toBe(true);
    }
    expect(packPlain(cyclic, 0)).toBeUndefined();
    expect(() => encodeValue(cyclic)).toThrow(expect.objectContaining({ code: 'STORE_INVALID_ARGUMENT' }));
    expect(() => encodeValue({ run: () => 1 })).toThrow(expect.objectContaining({ code: 'STORE_INVALID_ARGUMENT' }));
    expect(() => encodeValue({ big: 2n ** 70n })).toThrow(expect.objectContaining({ code: 'STORE_INVALID_ARGUMENT' }));
  });
});

describe('packPlainDigests', () => {
  /** Digest strings of every packed prefix, near misses (upper case, one short, unknown prefix) among plain data. */
  const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });
  const digest = fc.oneof(
    fc.tuple(fc.constantFrom('b3:', 'sha256:', 'artifact://blake3/'), hex).map(([prefix, digits]) => prefix + digits),
    hex.map((digits) => `b3:${digits.toUpperCase()}`),
    hex.map((digits) => `sha256:${digits.slice(1)}`),
    hex.map((digits) => `md5:${digits}`),
  );
  const withDigests = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      digest,
      text,
      numbers,
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 8 }),
      fc.dictionary(fc.oneof(text, digest, fc.constantFrom('__proto__')), fc.option(tie('value'), { nil: undefined }), { maxKeys: 8 }),
    ),
  })).value;

  it('writes the bytes msgpackr writes for packDigests of the scoped value, and only the scoped strings as digests', () => {
    fc.assert(
      fc.property(withDigests, digest, (value, outside) => {
        const row = [outside, new ExtensionScope(value), [outside]];
        const written = packPlainDigests(row, 0);
        if (written === undefined) return;
        expect(Buffer.from(written).equals(Buffer.from(pinned.pack([outside, packDigests(value), [outside]])))).toBe(true);
      }),
      { numRuns: runs * 20 },
    );
  });

  it('leaves what is not plain data to msgpackr, and packPlain refuses a scope', () => {
    for (const value of [new Map([['a', 1]]), [1, undefined], new Date(0), { list: [new Uint8Array(2)] }, new ExtensionScope(1)]) {
      expect(packPlainDigests([new ExtensionScope(value)], 0)).toBeUndefined();
    }
    expect(packPlain([new ExtensionScope({ a: 1 })], 0)).toBeUndefined();
  });
});

describe('packPlain: what it remembers', () => {
  it('writes a frozen subtree from the bytes it kept, and keeps none where a part of it can still change', () => {
    const deepFreeze = <T>(value: T): T => {
      if (typeof value === 'object' && value !== null) {
        for (const item of Object.values(value)) deepFreeze(item);
        Object.freeze(value);
      }
      return value;
    };
    const same = (value: unknown) => expect(Buffer.from(packPlain(value, 0)!).equals(Buffer.from(pinned.pack(value)))).toBe(true);
    fc.assert(
      fc.property(plain, (value) => {
        // A frozen subtree, packed twice (the second time from the kept bytes), alone and inside another value.
        const frozen = deepFreeze({ value, list: [value, { value }] });
        // (Objects without a prototype, which the generator makes too, are msgpackr's.)
        if (packPlain(frozen, 0) === undefined) return;
        same(frozen);
        same(frozen);
        same({ outer: frozen, again: [frozen] });
      }),
      { numRuns: runs * 5 },
    );
    // A frozen object holding one that is not: what changes under it is written as it is now.
    const inner = { count: 1 };
    const holder = Object.freeze({ inner, tag: 'x' });
    same(holder);
    inner.count = 2;
    same(holder);
    expect(pinned.unpack(packPlain(holder, 0)!)).toEqual({ inner: { count: 2 }, tag: 'x' });
    // A frozen object with an accessor: its value is read each time.
    let calls = 0;
    const getter = Object.freeze(Object.defineProperty({ fixed: 1 }, 'live', { enumerable: true, get: () => ++calls }));
    expect(pinned.unpack(packPlain(getter, 0)!)).toEqual({ fixed: 1, live: 1 });
    expect(pinned.unpack(packPlain(getter, 0)!)).toEqual({ fixed: 1, live: 2 });
  });

  it('says whether the last value held a map key named __proto__ (a read renames it), not a string that spells it', () => {
    const withKey = JSON.parse('{"a":{"__proto__":1}}') as unknown;
    packPlain(withKey, 0);
    expect(packedProtoKey()).toBe(true);
    packPlain({ a: '__proto__', b: ['__proto__'] }, 0);
    expect(packedProtoKey()).toBe(false);
    const frozenKey = Object.freeze(JSON.parse('{"__proto__":{"x":1}}') as object);
    for (let round = 0; round < 2; round++) {
      packPlain({ inside: frozenKey }, 0);
      expect(packedProtoKey()).toBe(true);
    }
  });

  it('keeps a frozen subtree apart inside and outside an extension scope (its digests are written differently)', () => {
    const digest = `b3:${'ab'.repeat(32)}`;
    const frozen = Object.freeze({ digest, list: Object.freeze([digest, 1]) });
    for (let round = 0; round < 2; round++) {
      expect(Buffer.from(packPlain({ frozen }, 0)!).equals(Buffer.from(pinned.pack({ frozen })))).toBe(true);
      const scoped = packPlainDigests([new ExtensionScope({ frozen }), frozen], 0)!;
      expect(Buffer.from(scoped).equals(Buffer.from(pinned.pack([packDigests({ frozen }), frozen])))).toBe(true);
    }
  });
});
