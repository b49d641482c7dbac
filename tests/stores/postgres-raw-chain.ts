import { crc32 } from 'node:zlib';
import type pg from 'pg';
import { decodeRow } from '../../stores/postgres/postgres-rows.js';
import { encodeRecord } from '../../stores/record-drafts.js';
import type { ChainEntry } from './chain-forgery.js';

/*
 * A PostgreSQL stream's records and chain fields read and rewritten with plain SQL, around the store: what someone
 * with write access to the database but without the chain key can do.
 */

/** Every stored record of the stream with its chain field. */
export const postgresRawChain = async (admin: pg.Pool, schema: string, stream: string): Promise<ChainEntry[]> => {
  const { rows } = await admin.query<{ seq: string; payload: Buffer; checksum: string; chain: Buffer | null }>(`SELECT seq, payload, checksum, chain FROM ${schema}.records WHERE stream = $1 ORDER BY seq`, [stream]);
  return rows.map((row) => ({ record: decodeRow(stream, Number(row.seq), row.payload, Number(row.checksum)), field: row.chain === null ? undefined : new Uint8Array(row.chain) }));
};

/**
 * Replaces the stream's rows with `entries` as they are (payloads re-encoded, checksums right, fields as given), sets
 * its head to match, and with `dropSeal` clears its seal.
 */
export const postgresForge = async (admin: pg.Pool, schema: string, stream: string, entries: readonly ChainEntry[], options: { dropSeal?: boolean } = {}): Promise<void> => {
  const client = await admin.connect();
  try {
    await client.query('BEGIN');
    await client.query(`DELETE FROM ${schema}.records WHERE stream = $1`, [stream]);
    for (const { record, field } of entries) {
      const payload = Buffer.from(encodeRecord(record, 'compact'));
      await client.query(
        `INSERT INTO ${schema}.records (stream, seq, id, type, v, at, actor, cause, corr, payload, checksum, chain) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [stream, record.seq, record.id, record.type, record.v, record.at, record.actor, record.cause ?? null, record.corr ?? null, payload, crc32(payload), field === undefined ? null : Buffer.from(field)],
      );
    }
    await client.query(`UPDATE ${schema}.streams SET head = $2${options.dropSeal ? ', seal = NULL' : ''} WHERE stream = $1`, [stream, entries.length]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
};
