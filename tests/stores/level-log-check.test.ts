import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { crc32c, logDamage } from '../../stores/level-log-check.js';
import { draft, temporaryDirectory } from './store-test-support.js';

let parent: { path: string; remove(): Promise<void> };
/** A real LevelDB write-ahead log of a stream: many records over several 32 KiB blocks. */
let log: Buffer;
/** Where its last record starts: bytes before it belong to records a later one follows. */
let lastRecord = 0;

beforeAll(async () => {
  parent = await temporaryDirectory('rein-log-check-');
  const store = await openLevelEventStore(parent.path);
  for (let seq = 1; seq <= 60; seq++) await store.append('s', [{ ...draft(seq), data: { text: `${seq} `.repeat(200 + seq * 7) } }], { expectedSeq: seq - 1 });
  await store.close();
  const directory = join(parent.path, 'streams', 's');
  const name = (await readdir(directory)).find((entry) => entry.endsWith('.log'))!;
  log = await readFile(join(directory, name));
  // Walk the records the way the format lays them out, to know where the last one starts.
  for (let block = 0; block < log.length; block += 32 * 1024) {
    let at = block;
    while (Math.min(block + 32 * 1024, log.length) - at >= 7) {
      const length = log.readUInt16LE(at + 4);
      if (log[at + 6] === 0 && length === 0) break;
      lastRecord = at;
      at += 7 + length;
    }
  }
});
afterAll(async () => {
  await parent.remove();
});

describe('the write-ahead log check', () => {
  it('computes CRC-32C (the check value of the standard test vector)', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('finds an intact log intact, and one a crash cut off anywhere intact too (the cut write was never acknowledged)', () => {
    expect(log.length).toBeGreaterThan(2 * 32 * 1024);
    expect(logDamage(log)).toBeUndefined();
    fc.assert(
      fc.property(fc.nat({ max: log.length }), (cut) => {
        expect(logDamage(log.subarray(0, cut))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('finds any changed byte of any record a later record follows', () => {
    fc.assert(
      fc.property(fc.nat({ max: lastRecord - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
        // The padding at a block's end (at most six zero bytes) holds no record; LevelDB never reads it either.
        const block = Math.floor(at / (32 * 1024)) * 32 * 1024;
        let start = block;
        while (start + 7 <= block + 32 * 1024 && start <= at) {
          const length = log.readUInt16LE(start + 4);
          if (log[start + 6] === 0 && length === 0) return;
          if (at < start + 7 + length) break;
          start += 7 + length;
        }
        if (start > at || start + 7 > block + 32 * 1024) return;
        // In the last block, a length grown past the end of the file reads as a write a crash cut off, to LevelDB as
        // here: the one change neither can tell from a crash (the watermark check catches the records it hides).
        if (block + 32 * 1024 >= log.length && (at === start + 4 || at === start + 5)) return;
        const damaged = Buffer.from(log);
        damaged[at] = damaged[at]! ^ flip;
        expect(logDamage(damaged)).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });
});
