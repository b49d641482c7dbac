import type { RecordEnvelope } from '../models/envelope.js';
import { FRAME_HEADER_BYTES, packPayload, unpackPayload } from './record-codec.js';
import { packPlain, packedProtoKey } from './plain-pack.js';
import { digestOfInput, digestPrefixLength, recordDigest, writeDigestPrefix } from './chain-crypto.js';
import { StoreError } from './store-errors.js';

/** The compact row of an envelope: `[seq, id, type, v, at, actor, cause, corr, data?]` (the stream is not in it). */
const rowOf = (envelope: RecordEnvelope): unknown[] => {
  const row: unknown[] = [envelope.seq, envelope.id, envelope.type, envelope.v, envelope.at, envelope.actor, envelope.cause ?? null, envelope.corr ?? null];
  if (envelope.data !== undefined) row.push(envelope.data);
  return row;
};

/**
 * The bytes the chain digests for a record: the msgpack of its compact row as a read returns the record, whatever
 * backend or layout stores it, so a record digests the same when appended, read back, forked or copied. The stream is
 * left out (a fork carries its parent's chain as it is; the seal binds the stream). A value a read would return
 * changed (a key named `__proto__`, data msgpackr writes for non-plain values) is digested as the read returns it:
 * encoded, decoded and encoded again; a value that would not read back at all (a Map with non-string keys) is
 * `STORE_INVALID_ARGUMENT`, so the append that brought it writes nothing. Returns a fresh copy the caller may keep.
 */
export function canonicalRecordBytes(envelope: RecordEnvelope): Uint8Array {
  const packed = packPayload(rowOf(envelope));
  const bytes = Buffer.from(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
  if (packed.readsBack) return Buffer.from(bytes);
  let read: unknown;
  try {
    read = unpackPayload(Buffer.from(bytes));
  } catch (error) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `value cannot be stored: it would not read back (${String(error)})`, { cause: error });
  }
  const again = packPayload(read);
  return Buffer.from(again.bytes);
}

/**
 * The canonical bytes of a record a store has just encoded in the compact layout (`stored`: header, then the payload
 * `canonicalRecordBytes` would write): the payload itself when it reads back as written (`readsBack` of
 * `encodeFramedPlain`: plain data without a `__proto__` key, no second encoding), else `canonicalRecordBytes`.
 */
export function canonicalOfCompact(envelope: RecordEnvelope, stored: Uint8Array, readsBack: boolean): Uint8Array {
  if (!readsBack) return canonicalRecordBytes(envelope);
  return Buffer.from(stored.buffer, stored.byteOffset + FRAME_HEADER_BYTES, stored.byteLength - FRAME_HEADER_BYTES);
}

/**
 * `recordDigest(predecessor, canonicalRecordBytes(envelope))` in one pass: plain data is packed straight behind the
 * digest's prefix in the writer's scratch buffer and hashed there, with no copy (the common case); anything else takes
 * the general path.
 */
export function envelopeDigest(predecessor: Uint8Array, envelope: RecordEnvelope): Uint8Array {
  const prefix = digestPrefixLength(predecessor.length);
  const packed = packPlain(rowOf(envelope), prefix);
  if (packed === undefined || packedProtoKey()) return recordDigest(predecessor, canonicalRecordBytes(envelope));
  writeDigestPrefix(packed, predecessor);
  return digestOfInput(packed);
}
