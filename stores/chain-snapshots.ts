import { crc32 } from 'node:zlib';
import type { StoredSnapshot } from './event-store.js';
import { ChainKey } from './chain-crypto.js';
import { FRAME_HEADER_BYTES, RECORD_FORMAT_BYTE, decodeValue, encodeFramedPlain, encodeValue } from './record-codec.js';
import { seqBytes } from './chain.js';

/*
 * Snapshots under the chain (docs/architecture.md: *The chain*): a snapshot is stored with a tag — a MAC (keyed BLAKE3) under the store's key of
 * the stream, its seq, the chain field of the record at that seq and the snapshot's canonical bytes — so a snapshot
 * another key wrote, or one altered in the storage, or one whose record was changed since, is not restored in place of
 * the log: `loadSnapshot` marks it `authenticated: false` and resume falls back to a full replay, saying so.
 */

/**
 * The snapshot's canonical bytes: its fields encoded, decoded and encoded again (the form a load gives back). Plain
 * data without a key named `__proto__` reads back exactly as written (what `canonicalOfCompact` relies on for records),
 * so its first encoding is already canonical: a snapshot of a tree with a thousand children is encoded once, not
 * encoded, decoded and encoded again, to be tagged.
 */
export const canonicalSnapshot = (snapshot: StoredSnapshot): Uint8Array => canonicalOf(snapshot).bytes;

/** The canonical bytes, and whether they are the snapshot's own first encoding (`canonicalSnapshot`). */
const canonicalOf = (snapshot: StoredSnapshot): { bytes: Uint8Array; first: boolean } => {
  const { seq, version, at, data } = snapshot;
  const { stored, readsBack } = encodeFramedPlain(RECORD_FORMAT_BYTE, { seq, version, at, data });
  if (readsBack) return { bytes: stored, first: true };
  return { bytes: encodeValue(decodeValue(stored, { stream: 'snapshot' })), first: false };
};

const tagOver = (key: ChainKey, stream: string, seq: number, field: Uint8Array, canonical: Uint8Array): Uint8Array =>
  key.tag('snapshot', [Buffer.from(stream, 'utf8'), Buffer.from([0]), seqBytes(seq), field, canonical]);

const tagOf = (key: ChainKey, stream: string, snapshot: StoredSnapshot, field: Uint8Array): Uint8Array => tagOver(key, stream, snapshot.seq, field, canonicalSnapshot(snapshot));

/** msgpack: a map of four entries, of five; the key `tag` (a 3-byte fixstr); a bin8 header. */
const fourEntries = 0x84;
const fiveEntries = 0x85;
const tagKey = Uint8Array.of(0xa3, 0x74, 0x61, 0x67);
const bin8 = 0xc4;

/**
 * The stored bytes of a snapshot: its fields and, when the record at its seq is chained, its tag. When the canonical
 * bytes are the snapshot's own first encoding (plain data: a map of `seq`, `version`, `at`, `data`), the stored form is
 * those bytes with the map grown to five entries and `tag` appended — what encoding the five fields writes, byte for
 * byte (a property test checks it) — so a snapshot holding a delegation's thousand children is encoded once, not twice.
 */
export function encodeTaggedSnapshot(key: ChainKey, stream: string, snapshot: StoredSnapshot, field: Uint8Array | undefined): Uint8Array {
  const { seq, version, at, data } = snapshot;
  if (field === undefined) return encodeValue({ seq, version, at, data });
  const canonical = canonicalOf(snapshot);
  const tag = tagOver(key, stream, seq, field, canonical.bytes);
  if (!canonical.first || canonical.bytes[FRAME_HEADER_BYTES] !== fourEntries || tag.length > 0xff) return encodeValue({ seq, version, at, data, tag });
  const body = canonical.bytes.subarray(FRAME_HEADER_BYTES);
  const stored = Buffer.allocUnsafe(canonical.bytes.length + tagKey.length + 2 + tag.length);
  stored.set(body, FRAME_HEADER_BYTES);
  stored[FRAME_HEADER_BYTES] = fiveEntries;
  let offset = FRAME_HEADER_BYTES + body.length;
  stored.set(tagKey, offset);
  offset += tagKey.length;
  stored[offset++] = bin8;
  stored[offset++] = tag.length;
  stored.set(tag, offset);
  stored[0] = RECORD_FORMAT_BYTE;
  stored.writeUInt32BE(crc32(stored.subarray(FRAME_HEADER_BYTES)), 1);
  return stored;
}

/**
 * A decoded stored snapshot with `authenticated` set: true only when its tag is the one `key` gives for it and the
 * chain field the record at its seq has now (`field`).
 */
export function checkedSnapshot(key: ChainKey | undefined, stream: string, stored: unknown, field: Uint8Array | undefined): StoredSnapshot {
  const { seq, version, at, data, tag } = stored as StoredSnapshot & { tag?: unknown };
  const snapshot: StoredSnapshot = { seq, version, at, data };
  const authenticated = key !== undefined && field !== undefined && tag instanceof Uint8Array && ChainKey.same(tag, tagOf(key, stream, snapshot, field));
  return { ...snapshot, authenticated };
}
