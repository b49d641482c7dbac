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
 */
export const BLOB_DELTA_FORMAT_BYTE = 0x06;

/** At most this many deltas lie between a stored blob and the whole blob its chain starts from. */
export const MAX_DELTA_DEPTH = 16;

/** A delta is kept only when it is at most this share of the blob (otherwise the blob is stored whole). */
const WORTH_KEEPING = 0.5;

/**
 * Blobs larger than this are stored whole, and no delta inflates past it: a damaged (or crafted) delta cannot make a
 * read allocate without bound.
 */
export const MAX_DELTA_BLOB_BYTES = 64 * 1024 * 1024;

/** The stored value of a delta: the base blob's BLAKE3 and the deflated bytes. */
export function encodeBlobDelta(baseHex: string, delta: Uint8Array): Uint8Array {
  return encodeFramed(BLOB_DELTA_FORMAT_BYTE, [baseHex, delta]);
}

const HEX_64 = /^[0-9a-f]{64}$/;

/** A stored delta's base and bytes; anything else is `CorruptRecordError` (naming the stream, no seq). */
export function decodeBlobDelta(stored: Uint8Array, stream: string): { baseHex: string; delta: Uint8Array } {
  const value = decodeFramed(stored, { stream }, BLOB_DELTA_FORMAT_BYTE);
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || !HEX_64.test(value[0]) || !(value[1] instanceof Uint8Array)) {
    throw new CorruptRecordError(stream, undefined, 'stored blob delta has the wrong shape');
  }
  return { baseHex: value[0], delta: value[1] };
}

/** `bytes` as a delta against `base`, or undefined when the delta would not save enough to be worth a chain link. */
export function deltaOf(base: Uint8Array, bytes: Uint8Array): Uint8Array | undefined {
  if (bytes.length < 64 || bytes.length > MAX_DELTA_BLOB_BYTES) return undefined;
  const delta = deflateRawSync(bytes, { dictionary: base });
  return delta.length <= bytes.length * WORTH_KEEPING ? delta : undefined;
}

/** The blob a delta rebuilds from its base (zlib refuses a damaged delta; the caller checks the BLAKE3). */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Uint8Array {
  return inflateRawSync(delta, { dictionary: base, maxOutputLength: MAX_DELTA_BLOB_BYTES });
}
