import type { StoredSnapshot } from './event-store.js';
import { ChainKey } from './chain-crypto.js';
import { FRAME_HEADER_BYTES, RECORD_FORMAT_BYTE, decodeValue, encodeFramedPlain, encodeValue } from './record-codec.js';
import { PROTO_KEY } from './chain-canon.js';
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
export const canonicalSnapshot = (snapshot: StoredSnapshot): Uint8Array => {
  const { seq, version, at, data } = snapshot;
  const { stored, plain } = encodeFramedPlain(RECORD_FORMAT_BYTE, { seq, version, at, data });
  if (plain && Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).indexOf(PROTO_KEY, FRAME_HEADER_BYTES) === -1) return stored;
  return encodeValue(decodeValue(stored, { stream: 'snapshot' }));
};

const tagOf = (key: ChainKey, stream: string, snapshot: StoredSnapshot, field: Uint8Array): Uint8Array =>
  key.tag('snapshot', [Buffer.from(stream, 'utf8'), Buffer.from([0]), seqBytes(snapshot.seq), field, canonicalSnapshot(snapshot)]);

/** The stored bytes of a snapshot: its fields and, when the record at its seq is chained, its tag. */
export function encodeTaggedSnapshot(key: ChainKey, stream: string, snapshot: StoredSnapshot, field: Uint8Array | undefined): Uint8Array {
  const { seq, version, at, data } = snapshot;
  return encodeValue({ seq, version, at, data, ...(field === undefined ? {} : { tag: tagOf(key, stream, snapshot, field) }) });
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
