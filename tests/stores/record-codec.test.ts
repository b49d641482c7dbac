import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RECORD_CODEC_DESCRIPTOR, RECORD_CODEC_OPTIONS, RECORD_FORMAT_BYTE, decodeValue, encodeValue } from '../../stores/index.js';

const runs = Number(process.env.FC_RUNS ?? 50);
const here = { stream: 'codec-test', seq: 7 };

function expectCorrupt(stored: Uint8Array): void {
  expect(() => decodeValue(stored, here)).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT_RECORD', seq: 7 }));
}

describe('record codec', () => {
  it('pins plain msgpack options and records them as JSON', () => {
    expect(Object.isFrozen(RECORD_CODEC_OPTIONS)).toBe(true);
    expect(RECORD_CODEC_OPTIONS).toMatchObject({ useRecords: false, mapsAsObjects: true, int64AsType: 'number', moreTypes: false });
    expect(RECORD_CODEC_OPTIONS.structures).toBeUndefined();
    expect(JSON.parse(JSON.stringify(RECORD_CODEC_DESCRIPTOR))).toEqual(RECORD_CODEC_DESCRIPTOR);
  });

  it('lays a value out as format byte, big-endian crc32 of the payload, payload', () => {
    const stored = encodeValue({ hello: 'world' });
    expect(stored[0]).toBe(RECORD_FORMAT_BYTE);
    const payload = stored.subarray(5);
    const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
    expect(view.getUint32(1, false)).toBe(crc32(payload));
    expect(decodeValue(stored, here)).toEqual({ hello: 'world' });
  });

  it('detects any single flipped bit, an unknown format byte and a truncated value', () => {
    const stored = encodeValue({ type: 'tool.settled', data: { output: 'some text', lines: [1, 2, 3] } });
    for (let index = 0; index < stored.length; index++) {
      for (const bit of [0x01, 0x80]) {
        const damaged = Uint8Array.from(stored);
        damaged[index] = damaged[index]! ^ bit;
        expectCorrupt(damaged);
      }
    }
    expectCorrupt(stored.subarray(0, 4));
    expectCorrupt(stored.subarray(0, stored.length - 1));
    expectCorrupt(new Uint8Array(0));
  });

  it('rejects values msgpack cannot carry with STORE_INVALID_ARGUMENT', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [{ big: 2n ** 70n }, { symbol: Symbol('s') }, { run: () => 1 }, cyclic]) {
      expect(() => encodeValue(value)).toThrow(expect.objectContaining({ code: 'STORE_INVALID_ARGUMENT' }));
    }
  });

  it('drops undefined-valued keys so decode(encode(x)) is canonical', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: false, withBigInt: false, withDate: true }), (value) => {
        const once = decodeValue(encodeValue(value), here);
        const twice = decodeValue(encodeValue(once), here);
        expect(twice).toStrictEqual(once);
        expect(Buffer.from(encodeValue(once))).toEqual(Buffer.from(encodeValue(twice)));
      }),
      { numRuns: runs * 4 },
    );
    expect(decodeValue(encodeValue({ kept: 1, dropped: undefined, deep: { gone: undefined } }), here)).toStrictEqual({ kept: 1, deep: {} });
  }, 120_000);

  it('round-trips JSON values (as JSON: -0 decodes as 0), except that a `__proto__` key decodes as `__proto_`', () => {
    expect(decodeValue(encodeValue(JSON.parse('{"__proto__":{"polluted":true}}')), here)).toEqual({ __proto_: { polluted: true } });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        fc.pre(!JSON.stringify(value).includes('"__proto__"'));
        expect(JSON.stringify(decodeValue(encodeValue(value), here))).toBe(JSON.stringify(value));
      }),
      { numRuns: runs * 4 },
    );
  }, 120_000);
});
