import type { RecordEnvelope } from '../../models/envelope.js';
import type { ChainKey } from '../chain-crypto.js';
import { loadChainKey } from '../chain-key-file.js';
import { CHAIN_ORIGIN, chainFields, fieldOf, sealTag, successorOf } from '../chain.js';
import { checkChain, type ChainReport } from '../chain-check.js';
import { CorruptRecordError, StoreError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';
import { decodeRow, decodeSeal, encodeSeal } from './postgres-rows.js';

/** Streams whose head predecessor a store remembers; beyond it the oldest is forgotten (and read again when needed). */
const REMEMBERED_STREAMS = 4096;
const PAGE = 1000;

/** A `records` row with its chain field. */
interface ChainedRow {
  seq: number;
  payload: Buffer;
  checksum: number;
  chain: Buffer | null;
}

/**
 * The PostgreSQL store's side of the chain (docs/architecture.md: *The chain*): its key, the predecessor each stream's next append
 * starts from (remembered from this process's own appends, else read from the head record, or — for a stream written
 * before the chain — from a walk over its records: the upgrade), the fields and seal of a batch, and the check.
 * Workers that share a store share the key through `REIN_CHAIN_KEY_FILE` (or the option).
 */
export class PostgresChain {
  readonly #db: PostgresQueries;
  readonly #given: ChainKey | undefined;
  #loading: Promise<ChainKey | undefined> | undefined;
  /** The predecessor after each remembered stream's head, by stream (insertion order: oldest first). */
  readonly #heads = new Map<string, { head: number; predecessor: Uint8Array }>();

  constructor(db: PostgresQueries, key: ChainKey | undefined) {
    this.#db = db;
    this.#given = key;
  }

  /** The key (this machine's when none was given, created on first use by a writer). */
  async key(create: boolean): Promise<ChainKey | undefined> {
    if (this.#given !== undefined) return this.#given;
    // A check never creates the machine's key: with none, nothing can be authenticated.
    if (!create && this.#loading === undefined) return loadChainKey({ create: false });
    if (this.#loading === undefined) {
      const loading = loadChainKey({ create: true });
      this.#loading = loading;
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined;
      });
    }
    const key = await this.#loading;
    if (key === undefined && create) throw new StoreError('CHAIN_KEY_UNAVAILABLE', 'no chain key');
    return key;
  }

  /** The chain fields of a batch appended after `expectedSeq`, the seal it leaves, and the predecessor after it. */
  async prepare(stream: string, expectedSeq: number, envelopes: readonly RecordEnvelope[], canonicals?: readonly Uint8Array[]): Promise<{ fields: Uint8Array[]; seal: Buffer | null; next: Uint8Array }> {
    if (envelopes.length === 0) return { fields: [], seal: null, next: CHAIN_ORIGIN };
    const key = (await this.key(true))!;
    const chained = chainFields(key, await this.#predecessor(stream, expectedSeq), envelopes, canonicals);
    const head = expectedSeq + envelopes.length;
    return { fields: chained.fields, seal: encodeSeal(head, sealTag(key, stream, head, chained.next)), next: chained.next };
  }

  /** After a committed append: the stream's next append starts from `predecessor`. */
  remember(stream: string, head: number, predecessor: Uint8Array): void {
    this.#heads.delete(stream);
    this.#heads.set(stream, { head, predecessor });
    if (this.#heads.size > REMEMBERED_STREAMS) this.#heads.delete(this.#heads.keys().next().value!);
  }

  /**
   * The predecessor of record `expectedSeq + 1`. A stream without record `expectedSeq` gets the origin: its append
   * then conflicts on the head (records are never rewritten, so a remembered predecessor stays right).
   */
  async #predecessor(stream: string, expectedSeq: number): Promise<Uint8Array> {
    if (expectedSeq === 0) return CHAIN_ORIGIN;
    const remembered = this.#heads.get(stream);
    if (remembered?.head === expectedSeq) return remembered.predecessor;
    const { rows } = await this.#db.query<ChainedRow>(stream, (s) => `SELECT seq, payload, checksum, chain FROM ${s}.records WHERE stream = $1 AND seq = $2`, [stream, expectedSeq]);
    const row = rows[0];
    if (row === undefined) return CHAIN_ORIGIN;
    const field = fieldOf(row.chain === null ? undefined : new Uint8Array(row.chain));
    if (field !== undefined) return field;
    let predecessor = CHAIN_ORIGIN;
    for await (const page of this.#pages(stream, expectedSeq)) for (const { record, field: stored } of page) predecessor = successorOf(predecessor, record, stored);
    return predecessor;
  }

  /** Records 1..head of `stream` with their chain fields, page by page (checksums, decoding and places checked). */
  async *#pages(stream: string, head: number): AsyncGenerator<Array<{ record: RecordEnvelope; field: Uint8Array | undefined }>> {
    for (let low = 1; low <= head; low += PAGE) {
      const high = Math.min(head, low + PAGE - 1);
      const { rows } = await this.#db.query<ChainedRow>(stream, (s) => `SELECT seq, payload, checksum, chain FROM ${s}.records WHERE stream = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`, [stream, low, high]);
      const page: Array<{ record: RecordEnvelope; field: Uint8Array | undefined }> = [];
      for (let seq = low; seq <= high; seq++) {
        const row = rows[seq - low];
        if (row === undefined || row.seq !== seq) {
          yield page;
          throw new CorruptRecordError(stream, seq, 'record is missing');
        }
        try {
          page.push({ record: decodeRow(stream, seq, row.payload, row.checksum), field: row.chain === null ? undefined : fieldOf(new Uint8Array(row.chain)) ?? new Uint8Array(0) });
        } catch (error) {
          yield page;
          throw error;
        }
      }
      yield page;
    }
  }

  /** Checks `stream`'s chain (see `EventStore.verifyChain`): the seal is the one its last append wrote. */
  async verify(stream: string): Promise<ChainReport> {
    const key = await this.key(false);
    const keyId = key === undefined ? {} : { keyId: key.id };
    const { rows } = await this.#db.query<{ head: number; seal: Buffer | null }>(stream, (s) => `SELECT head, seal FROM ${s}.streams WHERE stream = $1`, [stream]);
    const row = rows[0];
    if (row === undefined) return { stream, head: 0, status: 'authenticated', ...keyId };
    return checkChain({ stream, head: row.head, pages: this.#pages(stream, row.head), key, seal: decodeSeal(row.seal), sealedOnAppend: true });
  }
}
