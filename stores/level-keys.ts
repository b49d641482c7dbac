/**
 * Key layout of a stream database (one LevelDB per stream). Seqs are 16 fixed-width lower-case hex digits, so
 * lexicographic key order is seq order:
 * - `e!<seq>` a record, `s!<seq>` a snapshot, `b!<64 hex>` a blob appended with the stream, `d!<64 hex>` such a
 *   blob stored as a delta against an earlier one (blob-deltas.ts), `m!meta` the stream meta (JSON), `m!sync` the
 *   group-commit marker, `m!summary` the writer's summary of the stream (JSON).
 */
const SEQ_WIDTH = 16;

/** The stream meta (JSON, see level-stream-meta.ts). */
export const META_KEY = 'm!meta';
/**
 * Target of a tiny synced write (empty, never read): how the group commit synced before it fdatasynced the write-ahead
 * logs itself, and still its fallback when a database shows no log file. Older streams hold it.
 */
export const SYNC_KEY = 'm!sync';
/** The writer's summary of the stream (`AppendOptions.summary`): JSON `{ seq, value }`, rewritten with each batch that has one. */
export const SUMMARY_KEY = 'm!summary';

/** Bounds covering every record key. */
export const RECORD_KEYS = Object.freeze({ gte: 'e!', lt: 'e"' });
/** Bounds covering every stream blob key. */
export const BLOB_KEYS = Object.freeze({ gte: 'b!', lt: 'b"' });

/** Bounds covering every stream blob stored as a delta. */
export const DELTA_KEYS = Object.freeze({ gte: 'd!', lt: 'd"' });

/** `d!<64 hex>`: where a blob appended with the stream is stored as a delta, by its BLAKE3. */
export function deltaKey(hex: string): string {
  return `d!${hex}`;
}

/** `b!<64 hex>`: where a blob appended with the stream is stored, by its BLAKE3. */
export function blobKey(hex: string): string {
  return `b!${hex}`;
}

/** Bounds covering every snapshot key. */
export const SNAPSHOT_KEYS = Object.freeze({ gte: 's!', lt: 's"' });

function seqHex(seq: number): string {
  return seq.toString(16).padStart(SEQ_WIDTH, '0');
}

/** `e!<16 hex>`: where record `seq` is stored. */
export function recordKey(seq: number): string {
  return `e!${seqHex(seq)}`;
}

/** `s!<16 hex>`: where the snapshot taken at `seq` is stored. */
export function snapshotKey(seq: number): string {
  return `s!${seqHex(seq)}`;
}

/** The seq inside a record or snapshot key, or `undefined` when the key is not one. */
export function keySeq(key: string): number | undefined {
  if (key.length !== SEQ_WIDTH + 2 || key[1] !== '!') return undefined;
  const seq = Number.parseInt(key.slice(2), 16);
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * True for a key of the layout above. LevelDB reads table blocks without verifying their checksums, so a damaged
 * block can hand back a garbled key: the value stored under the right key is then simply absent, and only a key that
 * fits no part of the layout tells the damage from a blob that was never there.
 */
export function isLayoutKey(key: string): boolean {
  return /^(?:[es]![0-9a-f]{16}|[bd]![0-9a-f]{64}|m!meta|m!sync|m!summary)$/.test(key);
}
