import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Checks a stream's LevelDB write-ahead logs before the database is opened in place. LevelDB's recovery replays the
 * log and silently drops whatever follows a damaged record, then writes what it kept to a table and deletes the log:
 * the damaged bytes are gone for good, for rein and for anyone with a repair tool. So a stream is opened in place
 * (to append, resume or fork from) only when every record of its logs carries a valid checksum; otherwise the open is
 * refused and nothing on disk changes. Reading commands need no such check: they open throwaway copies.
 *
 * The log format (LevelDB's doc/log_format.md): 32 KiB blocks of records, each a 7-byte header (masked CRC-32C of
 * the type and payload, little-endian; payload length, 2 bytes little-endian; type) and its payload. A block's last
 * six bytes or fewer are zero padding; zero-typed empty records are preallocated space. A record cut off by the end of
 * the file is the write a crash interrupted, never acknowledged: LevelDB drops it without loss, and so is it here.
 */
const BLOCK = 32 * 1024;
const HEADER = 7;
const MASK_DELTA = 0xa282ead8;

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let index = 0; index < 256; index++) {
    let crc = index;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
    table[index] = crc >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli) of `bytes[start, end)`. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffffffff;
  for (let index = start; index < end; index++) crc = CRC32C_TABLE[(crc ^ bytes[index]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * The checksum LevelDB stores in a log or manifest record's header: the CRC-32C of `bytes[start, end)` (the type byte
 * and payload), masked, so a CRC of data that embeds CRCs stays well distributed.
 */
export function maskedCrc32c(bytes: Uint8Array, start: number, end: number): number {
  const crc = crc32c(bytes, start, end);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** Where a log is damaged: the byte offset of the first bad record and what is wrong with it; undefined when intact. */
export function logDamage(log: Uint8Array): { offset: number; reason: string } | undefined {
  const view = new DataView(log.buffer, log.byteOffset, log.byteLength);
  for (let block = 0; block < log.length; block += BLOCK) {
    const blockEnd = Math.min(block + BLOCK, log.length);
    let at = block;
    while (blockEnd - at >= HEADER) {
      const length = view.getUint16(at + 4, true);
      const type = log[at + 6]!;
      if (type === 0 && length === 0) break; // preallocated space: the rest of the block is unused
      const end = at + HEADER + length;
      if (end > blockEnd) {
        // A record never crosses its block: past the end of the file it is a write a crash cut off.
        if (blockEnd === log.length) return undefined;
        return { offset: at, reason: `a record's length (${length}) runs past its block` };
      }
      if (type < 1 || type > 4) return { offset: at, reason: `unknown record type ${type}` };
      if (view.getUint32(at, true) !== maskedCrc32c(log, at + 6, end)) return { offset: at, reason: 'checksum mismatch' };
      at = end;
    }
  }
  return undefined;
}

async function firstDamage(directory: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = (await readdir(directory)).filter((name) => /^\d+\.log$/.test(name)).sort();
  } catch {
    return undefined;
  }
  for (const name of names) {
    let log: Uint8Array;
    try {
      log = await readFile(join(directory, name));
    } catch {
      continue; // deleted meanwhile: LevelDB folded it into a table
    }
    const damage = logDamage(log);
    if (damage !== undefined) return `${name} is damaged at byte ${damage.offset} (${damage.reason})`;
  }
  return undefined;
}

/**
 * The first damaged write-ahead log of a stream directory, as a one-line description; undefined when every log is
 * intact (or there is none). Damage must be seen three times, 50 ms apart, at the same place: a process that holds
 * the stream may be writing the log while it is read.
 */
export async function damagedLog(directory: string): Promise<string | undefined> {
  const seen = await firstDamage(directory);
  if (seen === undefined) return undefined;
  for (let again = 0; again < 2; again++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if ((await firstDamage(directory)) !== seen) return undefined;
  }
  return seen;
}
