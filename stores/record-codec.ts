import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { Options as PackrOptions } from 'msgpackr';
// Registers the packed-digest extension before the codec's Packr is built (every decoder needs it).
import './packed-digests.js';
import { CorruptRecordError, StoreError } from './store-errors.js';
import { packPlain, packedProtoKey } from './plain-pack.js';

/**
 * Identifies the stored value format: one format byte, a big-endian crc32 of the payload, then a msgpack payload
 * written with `RECORD_CODEC_OPTIONS`. Streams record it in their meta; an unknown id on open is a codec mismatch.
 * `/4` stores records in chained groups (record-groups.ts: packed rows, digests as 32 bytes, and each record's chain
 * field). Streams written by earlier builds (`/3` unchained groups, `/2` compact rows, `/1` envelope maps) stay
 * readable; the first append by this build starts their chain and moves their meta to `/4` (docs/architecture.md: *The chain*), so
 * a build without the chain refuses them with `STORE_CODEC_MISMATCH` rather than append unchained records.
 */
export const RECORD_CODEC_ID = 'rein.msgpackr2-plain.crc32/4';

/** The codec id of streams written in unchained groups, before the chain. */
export const PACKED_RECORD_CODEC_ID = 'rein.msgpackr2-plain.crc32/3';

/** The codec id of streams written in the compact layout, before digests were packed. */
export const COMPACT_RECORD_CODEC_ID = 'rein.msgpackr2-plain.crc32/2';

/** The codec id of streams written before the compact record layout. */
export const LEGACY_RECORD_CODEC_ID = 'rein.msgpackr2-plain.crc32/1';

/** The first byte of a stored plain value: a snapshot, or a whole envelope map in a `/1` stream. */
export const RECORD_FORMAT_BYTE = 0x01;

/**
 * The first byte of a record in the compact layout: a msgpack array `[seq, id, type, v, at, actor, cause, corr, data?]`
 * (absent `cause`/`corr` as nil, `data` left off when undefined). The stream is not stored: it is the database the
 * value lives in, restored on read.
 */
export const COMPACT_RECORD_FORMAT_BYTE = 0x02;

/**
 * The first byte of a compact record whose long strings live in the stream's blobs: the row gains a tenth element,
 * `[[path, blake3 hex], …]`, and each such string's place in `data` holds nil. A payload that two records carry (a
 * tool call's arguments in `model.responded` and in `effect.requested`) is then stored once, content-addressed.
 */
export const EXTERNAL_RECORD_FORMAT_BYTE = 0x03;

/**
 * The first byte of a packed record: a compact row whose digest strings (`b3:`, `sha256:` or `artifact://blake3/`
 * followed by 64 lower-case hex digits) are msgpack extensions of their 32 bytes (see packed-digests.ts). A read
 * returns the same strings.
 */
export const PACKED_RECORD_FORMAT_BYTE = 0x04;

const HEADER_LENGTH = 5;

/** msgpackr options plus `skipValues`, which msgpackr 2 honours but does not declare. */
export type PinnedCodecOptions = PackrOptions & { skipValues: readonly undefined[] };

function refuseFunction(): never {
  throw new TypeError('functions cannot be stored');
}

/**
 * The pinned msgpackr options. Plain MessagePack maps (`useRecords: false`, no shared structures), so every value
 * decodes on its own and a msgpackr upgrade cannot strand stored data. Keys whose value is `undefined` are skipped so
 * `decode(encode(x))` is canonical for plain data; functions are refused; 64-bit integers decode as numbers and -0 as 0.
 * Maps decode as plain objects (an `undefined` Map value survives the first trip only), Sets as arrays, and a key named
 * `__proto__` decodes as `__proto_` (msgpackr's prototype-pollution guard). Records should carry JSON-like data.
 */
export const RECORD_CODEC_OPTIONS: Readonly<PinnedCodecOptions> = Object.freeze({
  useRecords: false,
  maxSharedStructures: 0,
  mapsAsObjects: true,
  moreTypes: false,
  structuredClone: false,
  bundleStrings: false,
  useFloat32: 0,
  useTimestamp32: false,
  useToJSON: false,
  int64AsType: 'number',
  largeBigIntToFloat: false,
  largeBigIntToString: false,
  useBigIntExtension: false,
  encodeUndefinedAsNil: false,
  variableMapSize: false,
  coercibleKeyAsNumber: false,
  mapAsEmptyObject: false,
  setAsEmptyObject: false,
  allowArraysInMapKeys: false,
  copyBuffers: true,
  sequential: false,
  skipValues: Object.freeze([undefined]),
  writeFunction: refuseFunction,
});

/** A JSON-safe description of the codec (id plus pinned options), recorded in each stream's meta and compared on open. */
export const RECORD_CODEC_DESCRIPTOR: Readonly<CodecDescriptor> = Object.freeze({
  id: RECORD_CODEC_ID,
  library: 'msgpackr@2',
  options: Object.freeze(describeOptions(RECORD_CODEC_OPTIONS)),
});

/** The codec a stream's meta records: its id, the library and the pinned options. */
export interface CodecDescriptor {
  id: string;
  library: string;
  options: Record<string, unknown>;
}

/** The descriptor of `/3` streams (same library and options, unchained groups). */
export const PACKED_RECORD_CODEC_DESCRIPTOR: Readonly<CodecDescriptor> = Object.freeze({ ...RECORD_CODEC_DESCRIPTOR, id: PACKED_RECORD_CODEC_ID });

/** The descriptor of `/2` streams (same library and options, compact rows with digests as hex). */
export const COMPACT_RECORD_CODEC_DESCRIPTOR: Readonly<CodecDescriptor> = Object.freeze({ ...RECORD_CODEC_DESCRIPTOR, id: COMPACT_RECORD_CODEC_ID });

/** The descriptor of `/1` streams (same library and options, envelope maps). */
export const LEGACY_RECORD_CODEC_DESCRIPTOR: Readonly<CodecDescriptor> = Object.freeze({ ...RECORD_CODEC_DESCRIPTOR, id: LEGACY_RECORD_CODEC_ID });

function describeOptions(options: Readonly<PinnedCodecOptions>): Record<string, unknown> {
  const described: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'skipValues') described[key] = ['undefined'];
    else if (typeof value === 'function') described[key] = 'throws';
    else described[key] = value;
  }
  return described;
}

const packr = new Packr({ ...RECORD_CODEC_OPTIONS });

/** Where a value lives, so a decoding failure can name it. */
export interface ValueLocation {
  stream: string;
  seq?: number;
}

/**
 * Encodes a value into the stored layout. Rejects a value msgpack cannot carry (a symbol, a function, a cyclic
 * object, a bigint beyond 64 bits) with `STORE_INVALID_ARGUMENT`; nothing is partially written.
 */
export function encodeValue(value: unknown): Uint8Array {
  return encodeFramed(RECORD_FORMAT_BYTE, value);
}

/**
 * Encodes a value behind the given format byte (the record layouts choose theirs). Plain data goes through
 * `packPlain`, which writes the bytes the pinned Packr writes, straight behind the header; anything else through
 * msgpackr itself.
 */
export function encodeFramed(formatByte: number, value: unknown): Uint8Array {
  return encodeFramedPlain(formatByte, value).stored;
}

/**
 * `encodeFramed`, saying whether `packPlain` wrote the payload (plain data) or msgpackr did, and whether the payload is
 * what a read returns, encoded again (`readsBack`: plain data without a map key named `__proto__`, which a read renames).
 */
export function encodeFramedPlain(formatByte: number, value: unknown): { stored: Uint8Array; plain: boolean; readsBack: boolean } {
  const plain = packPlain(value, HEADER_LENGTH);
  if (plain !== undefined) {
    const stored = Buffer.allocUnsafe(plain.length);
    plain.copy(stored, HEADER_LENGTH, HEADER_LENGTH);
    stored[0] = formatByte;
    stored.writeUInt32BE(crc32(plain.subarray(HEADER_LENGTH)), 1);
    return { stored, plain: true, readsBack: !packedProtoKey() };
  }
  let payload: Uint8Array;
  try {
    payload = packr.pack(value);
  } catch (error) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `value cannot be encoded: ${String(error)}`, { cause: error });
  }
  const stored = Buffer.allocUnsafe(HEADER_LENGTH + payload.length);
  stored[0] = formatByte;
  stored.writeUInt32BE(crc32(payload), 1);
  stored.set(payload, HEADER_LENGTH);
  return { stored, plain: false, readsBack: false };
}

/** Bytes of the header before a stored value's payload (format byte and checksum). */
export const FRAME_HEADER_BYTES = HEADER_LENGTH;

/**
 * Decodes a stored value after checking its format byte and checksum.
 * Raises `CorruptRecordError` (`STORE_CORRUPT_RECORD`) rather than ever returning altered data.
 */
export function decodeValue(stored: Uint8Array, location: ValueLocation): unknown {
  return decodeFramed(stored, location, RECORD_FORMAT_BYTE);
}

/** The format byte of a stored value (undefined for a value shorter than its header). */
export const formatByteOf = (stored: Uint8Array): number | undefined => (stored.length < HEADER_LENGTH ? undefined : stored[0]);

/** Decodes a stored value whose format byte must be `formatByte`, after checking its checksum. */
export function decodeFramed(stored: Uint8Array, location: ValueLocation, formatByte: number): unknown {
  if (stored.length < HEADER_LENGTH) throw new CorruptRecordError(location.stream, location.seq, 'value is shorter than its header');
  if (stored[0] !== formatByte) {
    throw new CorruptRecordError(location.stream, location.seq, `unknown format byte ${String(stored[0])}`);
  }
  const payload = stored.subarray(HEADER_LENGTH);
  const expected = ((stored[1]! << 24) | (stored[2]! << 16) | (stored[3]! << 8) | stored[4]!) >>> 0;
  if (crc32(payload) !== expected) throw new CorruptRecordError(location.stream, location.seq, 'checksum mismatch');
  try {
    return packr.unpack(payload);
  } catch (error) {
    throw new CorruptRecordError(location.stream, location.seq, 'payload does not decode', { cause: error });
  }
}

/**
 * The msgpack bytes of `value` with the pinned options, without a header: `plain` says whether `packPlain` wrote them
 * (plain data) or msgpackr did, `readsBack` whether they are also what a read returns (see `encodeFramedPlain`). The bytes of a plain value sit in a scratch buffer valid until the next pack.
 */
export function packPayload(value: unknown): { bytes: Uint8Array; plain: boolean; readsBack: boolean } {
  const plain = packPlain(value, 0);
  if (plain !== undefined) return { bytes: plain, plain: true, readsBack: !packedProtoKey() };
  try {
    return { bytes: packr.pack(value), plain: false, readsBack: false };
  } catch (error) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `value cannot be encoded: ${String(error)}`, { cause: error });
  }
}

/** Decodes bytes `packPayload` wrote (no header, no checksum). */
export function unpackPayload(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}
