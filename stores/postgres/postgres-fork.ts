import { crc32 } from 'node:zlib';
import type { StreamInfo } from '../event-store.js';
import { encodeRecord } from '../record-drafts.js';
import { assertForkPoint } from '../store-arguments.js';
import { CorruptRecordError, StoreError } from '../store-errors.js';
import { appendChannel } from './postgres-migrate.js';
import type { PostgresQueries } from './postgres-queries.js';
import { decodeRow, describe, encodeSeal, type StreamRow } from './postgres-rows.js';
import type { ChainKey } from '../chain-crypto.js';
import { fieldOf, sealTag } from '../chain.js';

/**
 * `fork` of the PostgreSQL store, in one transaction: check the parent and the fork point, create the new stream
 * (`STORE_STREAM_EXISTS` when taken), copy records 1..atSeq re-encoded under the new name with their chain fields as
 * they are (a record's digest leaves its stream out), seal it under its own name (when the fork point is chained; else
 * its next append upgrades it), copy the parent's stream blobs, and notify.
 */
export const forkStream = async (db: PostgresQueries, fork: { stream: string; atSeq: number; name: string; createdAt: number; key: ChainKey }): Promise<StreamInfo> => {
  const { stream, atSeq, name, createdAt } = fork;
  return db.transaction(name, async (client) => {
    const s = db.quoted;
    const parent = await client.query<{ head: number }>(`SELECT head FROM ${s}.streams WHERE stream = $1 FOR SHARE`, [stream]);
    const head = parent.rows[0]?.head;
    if (head === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
    assertForkPoint(stream, atSeq, head);
    const created = await client.query<StreamRow>(
      `INSERT INTO ${s}.streams (stream, head, created_at, forked_from, forked_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (stream) DO NOTHING RETURNING *`,
      [name, atSeq, createdAt, stream, atSeq],
    );
    if (created.rows[0] === undefined) throw new StoreError('STORE_STREAM_EXISTS', `stream ${name} already exists`);
    const { rows } = await client.query<{ seq: number; payload: Buffer; checksum: number; chain: Buffer | null }>(`SELECT seq, payload, checksum, chain FROM ${s}.records WHERE stream = $1 AND seq <= $2 ORDER BY seq`, [stream, atSeq]);
    if (rows.length !== atSeq) throw new CorruptRecordError(stream, undefined, `expected ${atSeq} records to fork, found ${rows.length}`);
    const copies = rows.map((row) => {
      const record = decodeRow(stream, row.seq, row.payload, row.checksum);
      const encoded = encodeRecord({ ...record, stream: name }, 'compact');
      return { record, payload: Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength), chain: row.chain };
    });
    const last = rows.at(-1)?.chain;
    const predecessor = last === null || last === undefined ? undefined : fieldOf(new Uint8Array(last));
    await client.query(`UPDATE ${s}.streams SET seal = $2 WHERE stream = $1`, [name, predecessor === undefined ? null : encodeSeal(atSeq, sealTag(fork.key, name, atSeq, predecessor))]);
    await client.query(
      `INSERT INTO ${s}.records (stream, seq, id, type, v, at, actor, cause, corr, payload, checksum, chain)
        SELECT $1, seq, id, type, v, at, actor, cause, corr, payload, checksum, chain
        FROM unnest($2::bigint[], $3::text[], $4::text[], $5::int[], $6::float8[], $7::text[], $8::text[], $9::text[], $10::bytea[], $11::bigint[], $12::bytea[])
          AS copy(seq, id, type, v, at, actor, cause, corr, payload, checksum, chain)`,
      [
        name,
        copies.map((copy) => copy.record.seq),
        copies.map((copy) => copy.record.id),
        copies.map((copy) => copy.record.type),
        copies.map((copy) => copy.record.v),
        copies.map((copy) => copy.record.at),
        copies.map((copy) => copy.record.actor),
        copies.map((copy) => copy.record.cause ?? null),
        copies.map((copy) => copy.record.corr ?? null),
        copies.map((copy) => copy.payload),
        copies.map((copy) => crc32(copy.payload)),
        copies.map((copy) => copy.chain),
      ],
    );
    await client.query(`INSERT INTO ${s}.stream_blobs (stream, hash, content) SELECT $1, hash, content FROM ${s}.stream_blobs WHERE stream = $2`, [name, stream]);
    await client.query(`SELECT pg_notify($1, $2)`, [appendChannel(db.schema), name]);
    return describe(created.rows[0]);
  });
};
