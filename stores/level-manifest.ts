import { maskedCrc32c } from './level-log-check.js';

/**
 * Reads a LevelDB MANIFEST just far enough to say which table files the version it describes uses and which file
 * number the database allocates next. A read-only copy hard-links exactly those tables: they are immutable, and the
 * copy only creates files numbered from `nextFileNumber` on, so it never opens a linked (shared) file for writing.
 * A table the owner wrote after the manifest was read has a number at or above it and is left out (the copy would
 * delete it as obsolete anyway).
 *
 * Format (LevelDB's `db/log_format.h`, `db/version_edit.cc`): 32 KiB blocks of records, each with a 7-byte header
 * (CRC, length, type: full, first, middle, last); a record is one VersionEdit, a sequence of tagged fields.
 */

const BLOCK_SIZE = 32 * 1024;
const HEADER_SIZE = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** What a manifest says about the tables of its latest version. */
export interface ManifestTables {
  /** File numbers of the live tables (`NNNNNN.ldb`, or `.sst` from older builds). */
  live: Set<number>;
  nextFileNumber: number;
}

/** The live tables and next file number a manifest describes, or `undefined` when it cannot be read with certainty. */
export function readManifestTables(bytes: Uint8Array): ManifestTables | undefined {
  const records = manifestRecords(bytes);
  if (records === undefined) return undefined;
  const live = new Set<number>();
  let nextFileNumber: number | undefined;
  for (const record of records) {
    const edit = readEdit(record);
    if (edit === undefined) return undefined;
    for (const number of edit.deleted) live.delete(number);
    for (const number of edit.added) live.add(number);
    if (edit.nextFileNumber !== undefined) nextFileNumber = edit.nextFileNumber;
  }
  if (nextFileNumber === undefined) return undefined;
  for (const number of live) if (number >= nextFileNumber) return undefined;
  return { live, nextFileNumber };
}

/**
 * The payloads of a log file's records, each checked against its CRC; a torn tail (the owner mid-append) ends the list,
 * anything else odd (a bad checksum, an unknown type, a broken fragment chain) is `undefined`.
 */
function manifestRecords(bytes: Uint8Array): Uint8Array[] | undefined {
  const records: Uint8Array[] = [];
  let pending: Uint8Array[] | undefined;
  let offset = 0;
  while (offset < bytes.length) {
    const leftInBlock = BLOCK_SIZE - (offset % BLOCK_SIZE);
    if (leftInBlock < HEADER_SIZE) {
      offset += leftInBlock;
      continue;
    }
    if (offset + HEADER_SIZE > bytes.length) break;
    const length = bytes[offset + 4]! | (bytes[offset + 5]! << 8);
    const type = bytes[offset + 6]!;
    if (type === 0 && length === 0) {
      // Zero padding (a preallocated or block-trailing region): skip to the next block.
      offset += leftInBlock;
      continue;
    }
    const start = offset + HEADER_SIZE;
    if (start + length > bytes.length) break;
    const payload = bytes.subarray(start, start + length);
    offset = start + length;
    const stored = (bytes[start - 7]! | (bytes[start - 6]! << 8) | (bytes[start - 5]! << 16) | (bytes[start - 4]! << 24)) >>> 0;
    if (stored !== maskedCrc32c(bytes, start - 1, start + length)) return undefined;
    if (type === FULL) {
      if (pending !== undefined) return undefined;
      records.push(payload);
    } else if (type === FIRST) {
      if (pending !== undefined) return undefined;
      pending = [payload];
    } else if (type === MIDDLE || type === LAST) {
      if (pending === undefined) return undefined;
      pending.push(payload);
      if (type === LAST) {
        records.push(Buffer.concat(pending));
        pending = undefined;
      }
    } else {
      return undefined;
    }
  }
  return records;
}

interface Edit {
  added: number[];
  deleted: number[];
  nextFileNumber: number | undefined;
}

/** One VersionEdit's table additions, deletions and next file number; `undefined` on an unknown tag or a short field. */
function readEdit(record: Uint8Array): Edit | undefined {
  const edit: Edit = { added: [], deleted: [], nextFileNumber: undefined };
  const cursor = { offset: 0 };
  const varint = (): number | undefined => readVarint(record, cursor);
  const skipSlice = (): boolean => {
    const length = varint();
    if (length === undefined || cursor.offset + length > record.length) return false;
    cursor.offset += length;
    return true;
  };
  while (cursor.offset < record.length) {
    const tag = varint();
    switch (tag) {
      case 1: // comparator name
        if (!skipSlice()) return undefined;
        break;
      case 2: // log number
      case 4: // last sequence
      case 9: // previous log number
        if (varint() === undefined) return undefined;
        break;
      case 3: {
        const next = varint();
        if (next === undefined) return undefined;
        edit.nextFileNumber = next;
        break;
      }
      case 5: // compaction pointer: level, internal key
        if (varint() === undefined || !skipSlice()) return undefined;
        break;
      case 6: {
        const level = varint();
        const number = varint();
        if (level === undefined || number === undefined) return undefined;
        edit.deleted.push(number);
        break;
      }
      case 7: {
        const level = varint();
        const number = varint();
        const size = varint();
        if (level === undefined || number === undefined || size === undefined || !skipSlice() || !skipSlice()) return undefined;
        edit.added.push(number);
        break;
      }
      default:
        return undefined;
    }
  }
  return edit;
}

/** A little-endian base-128 varint up to 2^53; `undefined` when it runs past the end or is too long. */
function readVarint(bytes: Uint8Array, cursor: { offset: number }): number | undefined {
  let value = 0;
  let scale = 1;
  for (let index = 0; index < 8; index++) {
    if (cursor.offset >= bytes.length) return undefined;
    const byte = bytes[cursor.offset++]!;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return value;
    scale *= 128;
  }
  return undefined;
}
