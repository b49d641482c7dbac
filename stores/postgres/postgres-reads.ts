import type { RecordEnvelope } from '../../models/envelope.js';
import type { PositionedRecord, ReadAllOptions, ReadOptions } from '../event-store.js';
import { rangeLength, resolveReadRange, seqAt } from '../read-range.js';
import { readAllLimit } from '../read-all.js';
import { CorruptRecordError, StoreError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';
import { MAX_SEQ, POSITION_PATTERN, decodeRow, type RecordRow } from './postgres-rows.js';

/*
 * The PostgreSQL store's record reads: one stream's range (with its head, in one statement), every stream in commit
 * order, and the check that a batch whose commit went unanswered is in the log. Arguments are checked by the caller.
 */

/** Records of `stream` in `options`' range; a record missing below the head is `STORE_CORRUPT`. */
export const readStreamRecords = async (db: PostgresQueries, stream: string, options: ReadOptions | undefined): Promise<RecordEnvelope[]> => {
  resolveReadRange(options, 0);
  const reverse = options?.reverse === true;
  const { rows } = await db.query<RecordRow & { head: number }>(
    stream,
    (s) => `SELECT st.head, r.seq, r.payload, r.checksum FROM ${s}.streams st
        LEFT JOIN LATERAL (SELECT seq, payload, checksum FROM ${s}.records WHERE stream = st.stream AND seq >= $2 AND seq <= $3
          ORDER BY seq ${reverse ? 'DESC' : 'ASC'} LIMIT $4) r ON true
        WHERE st.stream = $1`,
    [stream, options?.from ?? 1, options?.to ?? MAX_SEQ, options?.limit ?? null],
  );
  const head = rows[0]?.head ?? 0;
  const range = resolveReadRange(options, head);
  if (range === undefined) return [];
  const found = rows.filter((row) => row.seq !== null);
  const records: RecordEnvelope[] = [];
  for (let index = 0; index < rangeLength(range); index++) {
    const seq = seqAt(range, index);
    const row = found[index];
    if (row === undefined || row.seq !== seq) throw new CorruptRecordError(stream, seq, 'record is missing');
    records.push(decodeRow(stream, seq, row.payload!, row.checksum!));
  }
  return records;
};

/**
 * Records of every stream in commit order (`transaction_id`, `global_position`) after `options.after`, read only
 * below the oldest running transaction, so a later commit never lands before a position already handed out.
 */
export const readAllRecords = async (db: PostgresQueries, options: ReadAllOptions | undefined): Promise<PositionedRecord[]> => {
  const limit = readAllLimit(options);
  const after = options?.after;
  let transaction = '0';
  let position = 0;
  if (after !== undefined) {
    const match = typeof after === 'string' ? POSITION_PATTERN.exec(after) : null;
    if (!match) throw new StoreError('STORE_INVALID_ARGUMENT', `not a position of this store: ${JSON.stringify(after)}`);
    transaction = match[1]!;
    position = Number(match[2]);
  }
  if (limit === 0) return [];
  const { rows } = await db.query<{ tx: string; position: number; stream: string; seq: number; payload: Buffer; checksum: number }>(
    'readAll',
    (s) => `SELECT transaction_id::text AS tx, global_position AS position, stream, seq, payload, checksum FROM ${s}.records
        WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint) AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, global_position LIMIT $3`,
    [transaction, position, limit],
  );
  return rows.map((row) => ({ position: `${row.tx}:${row.position}`, record: decodeRow(row.stream, row.seq, row.payload, row.checksum) }));
};

/** True when `stream` holds exactly these envelopes' ids at their seqs (a lost-connection append that committed). */
export const holdsBatch = async (db: PostgresQueries, stream: string, envelopes: readonly RecordEnvelope[]): Promise<boolean> => {
  const first = envelopes[0];
  if (first === undefined) return false;
  const { rows } = await db.query<{ seq: number; id: string }>(
    stream,
    (s) => `SELECT seq, id FROM ${s}.records WHERE stream = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
    [stream, first.seq, first.seq + envelopes.length - 1],
  );
  return rows.length === envelopes.length && rows.every((row, index) => row.id === envelopes[index]!.id && row.seq === envelopes[index]!.seq);
};
