import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { decodeFramed, encodeFramed } from './record-codec.js';
import { CorruptRecordError } from './store-errors.js';

/**
 * Stream blobs stored as a delta against the blob appended before them. The blobs a session appends are mostly its
 * model inputs, and each input repeats nearly all of the one before it (the system rules, the tools, all but one of
 * the recent turns), but it is stored under its own hash key, far from its predecessor, so Snappy finds little to
 * share: about 640 bytes of every round trip went to them. A delta is the blob deflated with the previous blob as
 * zlib's preset dictionary — about 110 bytes for a 3.5 KB model input. A chain is at most `MAX_DELTA_DEPTH` long, so
 * reading any blob inflates at most that many deltas; every blob along it is checked against its BLAKE3.
 *
 * zlib's window is 32 KiB, so a preset dictionary helps only for the last 32 KiB of the base: once a model input grew
 * past it (a long history), each delta re-deflated all of the input before its last 32 KiB — ~930 bytes per round
 * trip and a whole blob every few steps, and CPU that grew with the history. A delta therefore also records the
 * length of the prefix it shares with its base (a model input's history only grows, so that is nearly all of it) and
 * deflates only what follows, with the 32 KiB of the base around that point as its dictionary (the turns before it
 * and the tail after it, which the new input repeats). Deltas written without a prefix still read.
 */
export const BLOB_DELTA_FORMAT_BYTE = 0x06;

/**
 * At most this many deltas lie between a stored blob and the whole blob its chain starts from. 64: a model input's
 * delta records its shared prefix, so a link costs one small inflate and one copy on a read, and the whole blob a chain
 * starts from (the full history, tens of KB) is written once every 65 inputs instead of every 17 (it was 1.3 KB of a
 * round trip's 3.2 KB raw bytes in the step benchmark). Chains written with the earlier bound of 16 read as before.
 */
export const MAX_DELTA_DEPTH = 64;

/** A delta is kept only when it is at most this share of the blob (otherwise the blob is stored whole). */
const WORTH_KEEPING = 0.5;

/**
 * Blobs larger than this are stored whole, and no delta inflates past it: a damaged (or crafted) delta cannot make a
 * read allocate without bound.
 */
export const MAX_DELTA_BLOB_BYTES = 64 * 1024 * 1024;

/** A delta: deflated bytes, and the length of the prefix they share with their base. */
export interface BlobDelta {
  delta: Uint8Array;
  prefix: number;
}

/** The stored value of a delta: the base blob's BLAKE3 and the deflated bytes (and the shared prefix's length, when it has one). */
export function encodeBlobDelta(baseHex: string, delta: BlobDelta | Uint8Array): Uint8Array {
  if (delta instanceof Uint8Array) return encodeFramed(BLOB_DELTA_FORMAT_BYTE, [baseHex, delta]);
  return encodeFramed(BLOB_DELTA_FORMAT_BYTE, [baseHex, delta.delta, delta.prefix]);
}

const HEX_64 = /^[0-9a-f]{64}$/;

/** A stored delta's base, bytes and shared prefix (undefined for a delta written without one); anything else is `CorruptRecordError` (naming the stream, no seq). */
export function decodeBlobDelta(stored: Uint8Array, stream: string): { baseHex: string; delta: Uint8Array; prefix?: number } {
  const value = decodeFramed(stored, { stream }, BLOB_DELTA_FORMAT_BYTE);
  if (!Array.isArray(value) || (value.length !== 2 && value.length !== 3) || typeof value[0] !== 'string' || !HEX_64.test(value[0]) || !(value[1] instanceof Uint8Array)) {
    throw new CorruptRecordError(stream, undefined, 'stored blob delta has the wrong shape');
  }
  if (value.length === 2) return { baseHex: value[0], delta: value[1] };
  const prefix: unknown = value[2];
  if (typeof prefix !== 'number' || !Number.isSafeInteger(prefix) || prefix < 0) throw new CorruptRecordError(stream, undefined, 'stored blob delta has the wrong shape');
  return { baseHex: value[0], delta: value[1], prefix };
}

/** How much of the base around the shared prefix's end a delta is deflated against (zlib uses at most 32 KiB). */
const DICTIONARY_BYTES = 32 * 1024;
/** Compared a chunk at a time (native) before the first differing chunk is searched byte by byte. */
const PREFIX_CHUNK = 4096;

/** The length of the longest common prefix of two byte arrays. */
export function sharedPrefix(left: Uint8Array, right: Uint8Array): number {
  const limit = Math.min(left.length, right.length);
  const a = Buffer.from(left.buffer, left.byteOffset, left.byteLength);
  const b = Buffer.from(right.buffer, right.byteOffset, right.byteLength);
  let at = 0;
  while (at + PREFIX_CHUNK <= limit && a.subarray(at, at + PREFIX_CHUNK).equals(b.subarray(at, at + PREFIX_CHUNK))) at += PREFIX_CHUNK;
  while (at < limit && a[at] === b[at]) at++;
  return at;
}

/** The dictionary of a delta with a shared prefix: the base's bytes around the prefix's end (half before, half after). */
const dictionaryOf = (base: Uint8Array, prefix: number): Uint8Array => {
  const start = Math.max(0, Math.min(prefix - DICTIONARY_BYTES / 2, base.length - DICTIONARY_BYTES));
  return base.subarray(start, Math.min(base.length, start + DICTIONARY_BYTES));
};

/** How much of the base before the shared prefix's end a delta is deflated against (`deltaOf`). */
const DEFLATED_BEFORE_PREFIX = 2 * 1024;

/**
 * `bytes` as a delta against `base`, or undefined when the delta would not save enough to be worth a chain link.
 *
 * Deflated against the end of the dictionary a read inflates with (`dictionaryOf`): all of the base after the shared
 * prefix and `DEFLATED_BEFORE_PREFIX` bytes before it (the turn before, which the new one repeats), with a window no
 * larger than that and the new bytes need. A raw deflate stream only refers back from where it stands, so a delta made
 * against a suffix of the reader's dictionary, with a smaller window, inflates the same. Setting a 32 KiB dictionary and
 * window cost ~100 µs of main-thread CPU per model input (a quarter of the store's append); this costs ~35 µs for
 * deltas of the same size (the step benchmark's model inputs: 33 bytes either way).
 */
export function deltaOf(base: Uint8Array, bytes: Uint8Array): BlobDelta | undefined {
  if (bytes.length < 64 || bytes.length > MAX_DELTA_BLOB_BYTES) return undefined;
  const prefix = sharedPrefix(base, bytes);
  const full = dictionaryOf(base, prefix);
  const dictionary = full.subarray(Math.max(0, prefix - DEFLATED_BEFORE_PREFIX - (full.byteOffset - base.byteOffset)));
  const reach = dictionary.length + bytes.length - prefix;
  let windowBits = 9;
  while (windowBits < 15 && 1 << windowBits < reach) windowBits++;
  const delta = deflateRawSync(bytes.subarray(prefix), { dictionary, windowBits });
  return delta.length <= bytes.length * WORTH_KEEPING ? { delta, prefix } : undefined;
}

/**
 * The blob a delta rebuilds from its base (zlib refuses a damaged delta; the caller checks the BLAKE3). `prefix`: the
 * length the blob shares with its base (undefined for a delta written without one: the whole base is its dictionary).
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array, prefix?: number): Uint8Array {
  if (prefix === undefined) return inflateRawSync(delta, { dictionary: base, maxOutputLength: MAX_DELTA_BLOB_BYTES });
  if (prefix > base.length || prefix > MAX_DELTA_BLOB_BYTES) throw new RangeError('a delta shares more than its base holds');
  const rest = inflateRawSync(delta, { dictionary: dictionaryOf(base, prefix), maxOutputLength: MAX_DELTA_BLOB_BYTES - prefix });
  return Buffer.concat([base.subarray(0, prefix), rest]);
}
