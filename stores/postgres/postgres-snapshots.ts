import { crc32 } from 'node:zlib';
import { decodeValue, encodeValue } from '../record-codec.js';
import { CorruptRecordError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';
import { MAX_SEQ } from './postgres-rows.js';

/*
 * Snapshots in `<schema>.snapshots`: keyed by (stream, seq), the codec's bytes with their CRC-32, checked on load.
 * Arguments are checked by the caller.
 */

/** A snapshot's stored form: the codec's bytes (its fields and tag, see chain-snapshots.ts) and their CRC-32. */
export const encodeSnapshot = (encoded: Uint8Array): { payload: Buffer; checksum: number } => {
  const payload = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  return { payload, checksum: crc32(payload) };
};

/** The chain field of `stream`'s record `seq` (undefined when it has none). */
export const chainFieldAt = async (db: PostgresQueries, stream: string, seq: number): Promise<Uint8Array | undefined> => {
  const { rows } = await db.query<{ chain: Buffer | null }>(stream, (s) => `SELECT chain FROM ${s}.records WHERE stream = $1 AND seq = $2`, [stream, seq]);
  const chain = rows[0]?.chain;
  return chain === null || chain === undefined ? undefined : new Uint8Array(chain);
};

/** Store `stream`'s snapshot at `seq`, replacing one saved at the same seq. */
export const upsertSnapshot = async (db: PostgresQueries, stream: string, seq: number, stored: { payload: Buffer; checksum: number }): Promise<void> => {
  await db.query(
    stream,
    (s) => `INSERT INTO ${s}.snapshots (stream, seq, payload, checksum) VALUES ($1, $2, $3, $4) ON CONFLICT (stream, seq) DO UPDATE SET payload = EXCLUDED.payload, checksum = EXCLUDED.checksum`,
    [stream, seq, stored.payload, stored.checksum],
  );
};

/**
 * `stream`'s latest snapshot at or before `atOrBefore` (default: any), as stored (fields and tag), with the chain field
 * of the record it reflects; a checksum mismatch is `STORE_CORRUPT`.
 */
export const latestSnapshot = async (db: PostgresQueries, stream: string, atOrBefore: number | undefined): Promise<{ stored: unknown; field: Uint8Array | undefined; seq: number } | undefined> => {
  const { rows } = await db.query<{ seq: number; payload: Buffer; checksum: number }>(
    stream,
    (s) => `SELECT seq, payload, checksum FROM ${s}.snapshots WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1`,
    [stream, atOrBefore ?? MAX_SEQ],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  if (crc32(row.payload) !== row.checksum) throw new CorruptRecordError(stream, row.seq, 'snapshot checksum mismatch');
  return { stored: decodeValue(row.payload, { stream, seq: row.seq }), field: await chainFieldAt(db, stream, row.seq), seq: row.seq };
};
