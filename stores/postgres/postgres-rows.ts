import { crc32 } from 'node:zlib';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { AppendOptions, StreamInfo } from '../event-store.js';
import type { prepareStreamBlobs } from '../stream-blobs.js';
import type { prepareBatch } from '../record-drafts.js';
import { decodeRecord } from '../record-drafts.js';
import { verifyPosition } from '../read-range.js';
import { CorruptRecordError, StoreError } from '../store-errors.js';
import { BinaryArrays } from './postgres-binary-arrays.js';
import type { CallValue } from './postgres-prepared-call.js';

/*
 * How the PostgreSQL store's rows map to records: the `streams` row to `StreamInfo`, a `records` row back to its
 * envelope (checksum, decoding and place checked), and a prepared batch to the parameters of `<schema>.append(...)`.
 */

/** The upper bound of an open seq range in SQL. */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** A `readAll` position: `<transaction id>:<global position>`. */
export const POSITION_PATTERN = /^(\d{1,20}):(\d{1,19})$/;

/** A `records` row as `read` selects it (null columns: the stream exists but no record is in range). */
export interface RecordRow {
  seq: number | null;
  payload: Buffer | null;
  checksum: number | null;
}

/** A `streams` row. */
export interface StreamRow {
  stream: string;
  head: number;
  created_at: number;
  forked_from: string | null;
  forked_at: number | null;
  status: string | null;
  seal?: Buffer | null;
  /** The writer's summary (migration 6) and the head it describes; NULL until an append gives one. */
  summary?: unknown;
  summary_seq?: string | number | null;
}

/** The `StreamInfo` of a `streams` row. */
export const describe = (row: StreamRow): StreamInfo => {
  const info: StreamInfo = { stream: row.stream, head: row.head, createdAt: row.created_at };
  if (row.forked_from !== null && row.forked_at !== null) info.forkedFrom = { stream: row.forked_from, seq: row.forked_at };
  if (row.status !== null) info.status = row.status;
  const summarySeq = row.summary_seq === null || row.summary_seq === undefined ? undefined : Number(row.summary_seq);
  if (row.summary !== null && row.summary !== undefined && summarySeq !== undefined && Number.isSafeInteger(summarySeq) && summarySeq > 0) info.summary = { seq: summarySeq, value: row.summary };
  return info;
};

/** The stored record, after its checksum, its decoding and its place are checked. */
export const decodeRow = (stream: string, seq: number, payload: Buffer, checksum: number): RecordEnvelope => {
  if (crc32(payload) !== checksum) throw new CorruptRecordError(stream, seq, 'checksum mismatch');
  const record = decodeRecord(payload, stream, seq);
  verifyPosition(stream, record, seq);
  return record;
};

/**
 * The parameters of `<schema>.append(...)` for one prepared batch with its chain fields and the seal it leaves. The
 * arrays go in PostgreSQL's binary format (see postgres-binary-arrays.ts): the same values, with far less work on
 * both sides than array literals.
 */
export const appendParameters = (
  stream: string,
  options: AppendOptions,
  createdAt: number,
  durable: boolean,
  batch: ReturnType<typeof prepareBatch>,
  blobs: Awaited<ReturnType<typeof prepareStreamBlobs>>,
  chain: { fields: readonly Uint8Array[]; seal: Uint8Array | null },
): CallValue[] => {
  const { envelopes, values } = batch;
  const count = envelopes.length;
  const ids: string[] = new Array(count);
  const types: string[] = new Array(count);
  const vs: number[] = new Array(count);
  const ats: number[] = new Array(count);
  const actors: string[] = new Array(count);
  const causes: Array<string | null> = new Array(count);
  const corrs: Array<string | null> = new Array(count);
  const checksums: number[] = new Array(count);
  for (let index = 0; index < count; index++) {
    const envelope = envelopes[index]!;
    ids[index] = envelope.id;
    types[index] = envelope.type;
    vs[index] = envelope.v;
    ats[index] = envelope.at;
    actors[index] = envelope.actor;
    causes[index] = envelope.cause ?? null;
    corrs[index] = envelope.corr ?? null;
    checksums[index] = crc32(values[index]!);
  }
  const arrays = new BinaryArrays();
  return [
    stream,
    options.expectedSeq,
    options.fence?.owner ?? null,
    options.fence?.epoch ?? null,
    createdAt,
    durable,
    options.status ?? null,
    arrays.texts(ids),
    arrays.texts(types),
    arrays.int4s(vs),
    arrays.float8s(ats),
    arrays.texts(actors),
    arrays.texts(causes),
    arrays.texts(corrs),
    arrays.byteas(values),
    arrays.int8s(checksums),
    arrays.texts(blobs.map((blob) => blob.hex)),
    arrays.byteas(blobs.map((blob) => blob.bytes)),
    arrays.byteas(chain.fields),
    chain.seal,
    // Sent as JSON text (cast to jsonb): node-postgres would send a JS array as a PostgreSQL array.
    options.summary === undefined ? null : JSON.stringify(options.summary),
  ];
};

/** A stream's seal as the `streams.seal` column holds it: the head (8 bytes, big-endian), then the tag. */
export const encodeSeal = (head: number, tag: Uint8Array): Buffer => {
  const seal = Buffer.alloc(8 + tag.length);
  seal.writeBigUInt64BE(BigInt(head));
  seal.set(tag, 8);
  return seal;
};

/** The seal a `streams.seal` column holds (undefined when NULL or malformed: a malformed one fails to match). */
export const decodeSeal = (stored: Buffer | null): { head: number; tag: Uint8Array } | undefined =>
  stored === null || stored.length < 9 ? undefined : { head: Number(stored.readBigUInt64BE(0)), tag: new Uint8Array(stored.subarray(8)) };

/** The one statement an append sends. */
export const APPEND_SQL = (schema: string) => `SELECT ${schema}.append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::jsonb) AS head`;

/** A fence must be `{ owner: non-empty string, epoch: positive integer }`, else `STORE_INVALID_ARGUMENT`. */
export const assertFence = (options: AppendOptions): void => {
  const fence = options.fence;
  if (fence === undefined) return;
  if (typeof fence !== 'object' || fence === null || typeof fence.owner !== 'string' || fence.owner === '' || !Number.isSafeInteger(fence.epoch) || fence.epoch < 1) {
    throw new StoreError('STORE_INVALID_ARGUMENT', 'fence must be { owner: non-empty string, epoch: positive integer }');
  }
};

