import { crc32 } from 'node:zlib';
import type { StoredSnapshot } from '../event-store.js';
import { decodeValue, encodeValue } from '../record-codec.js';
import { CorruptRecordError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';
import { MAX_SEQ } from './postgres-rows.js';

/*
 * Snapshots in `<schema>.snapshots`: keyed by (stream, seq), the codec's bytes with their CRC-32, checked on load.
 * Arguments are checked by the caller.
 */

/** A snapshot's stored form: the codec's bytes and their CRC-32. */
export const encodeSnapshot = (snapshot: StoredSnapshot): { payload: Buffer; checksum: number } => {
  const { seq, version, at, data } = snapshot;
  const encoded = encodeValue({ seq, version, at, data });
  const payload = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  return { payload, checksum: crc32(payload) };
};

/** Store `stream`'s snapshot at `seq`, replacing one saved at the same seq. */
export const upsertSnapshot = async (db: PostgresQueries, stream: string, seq: number, stored: { payload: Buffer; checksum: number }): Promise<void> => {
  await db.query(
    stream,
    (s) => `INSERT INTO ${s}.snapshots (stream, seq, payload, checksum) VALUES ($1, $2, $3, $4) ON CONFLICT (stream, seq) DO UPDATE SET payload = EXCLUDED.payload, checksum = EXCLUDED.checksum`,
    [stream, seq, stored.payload, stored.checksum],
  );
};

/** `stream`'s latest snapshot at or before `atOrBefore` (default: any); a checksum mismatch is `STORE_CORRUPT`. */
export const latestSnapshot = async (db: PostgresQueries, stream: string, atOrBefore: number | undefined): Promise<StoredSnapshot | undefined> => {
  const { rows } = await db.query<{ seq: number; payload: Buffer; checksum: number }>(
    stream,
    (s) => `SELECT seq, payload, checksum FROM ${s}.snapshots WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1`,
    [stream, atOrBefore ?? MAX_SEQ],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  if (crc32(row.payload) !== row.checksum) throw new CorruptRecordError(stream, row.seq, 'snapshot checksum mismatch');
  return decodeValue(row.payload, { stream, seq: row.seq }) as StoredSnapshot;
};
