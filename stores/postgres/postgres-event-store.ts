import { crc32 } from 'node:zlib';
import type { Observable } from 'rxjs';
import type { ClientBase, Pool, PoolClient, PoolConfig } from 'pg';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import type {
  AppendOptions,
  EventStore,
  ForkOptions,
  PositionedRecord,
  ReadAllOptions,
  ReadOptions,
  StoreCapabilities,
  StoredSnapshot,
  StreamInfo,
  StreamPageOptions,
} from '../event-store.js';
import { prepareStreamBlobs, verifiedBlob } from '../stream-blobs.js';
import { refDigest } from '../blob-hash.js';
import { prepareBatch } from '../record-drafts.js';
import { decodeValue, encodeValue } from '../record-codec.js';
import { rangeLength, resolveReadRange, seqAt } from '../read-range.js';
import { readAllLimit } from '../read-all.js';
import { assertExpectedSeq, assertSnapshot, assertSnapshotBound } from '../store-arguments.js';
import { CorruptRecordError, StoreError, StreamLockedError } from '../store-errors.js';
import { assertStreamName, forkStreamName } from '../stream-names.js';
import { TailHub } from '../tail-hub.js';
import { PostgresBlobStore } from './postgres-blob-store.js';
import { isConnectionError, storeErrorOf } from './postgres-errors.js';
import { forkStream } from './postgres-fork.js';
import { APPEND_SQL, MAX_SEQ, POSITION_PATTERN, appendParameters, assertFence, decodeRow, describe, type RecordRow, type StreamRow } from './postgres-rows.js';
import { appendChannel, migratePostgresSchema, type MigrationReport } from './postgres-migrate.js';
import { AppendListener } from './postgres-notifications.js';
import { PostgresQueries, closedError } from './postgres-queries.js';
import { parsePostgresUrl } from './postgres-url.js';

/** Options of `openPostgresEventStore`. */
export interface PostgresEventStoreOptions {
  /**
   * `'sync'` (default): an append resolves once its transaction is committed and flushed (`synchronous_commit`).
   * `'relaxed'`: appends commit with `synchronous_commit = off`: a server crash (not a client crash) can lose the last
   * few hundred milliseconds of acknowledged appends, always as a suffix of each stream. `append(…, { sync: true })`
   * still waits for the flush.
   */
  durability?: 'sync' | 'relaxed';
  /** Wall clock for `createdAt` (epoch ms); defaults to `Date.now`. */
  clock?: () => number;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How often tails look for appends of other processes when no notification came (ms, default 1,000). */
  pollIntervalMs?: number;
  /** How long an operation keeps retrying while the server is unreachable before `STORE_UNAVAILABLE` (ms, default 30,000). */
  retryForMs?: number;
  /** `application_name` of the connections (shown in `pg_stat_activity`). */
  applicationName?: string;
}

/**
 * The PostgreSQL EventStore (README: *PostgreSQL*): records keyed by (stream, seq) in `<schema>.records` with the
 * codec's bytes and their CRC-32, appended by one server-side function call per batch (lease check, expected-seq check,
 * insert, notify: one round trip, one transaction). `readAll` follows commit order (`transaction_id`,
 * `global_position`, read only below the oldest running transaction). Tails wake on LISTEN/NOTIFY and poll besides.
 * Any number of processes may share one store; a stream's single writer is enforced by the expected seq and, for
 * leased streams, by the lease epoch.
 */
export class PostgresEventStore implements EventStore {
  readonly capabilities: StoreCapabilities = { persistent: true, durableSync: true, crossProcessReads: true, globalOrder: true, fencing: true };
  readonly blobs: PostgresBlobStore;
  /** The store's URL with its password hidden: the only form to print or record. */
  readonly location: string;
  readonly db: PostgresQueries;
  /** What opening the store did to its schema (versions before and after, migrations applied now). */
  migration: MigrationReport | undefined;
  readonly #sync: boolean;
  readonly #clock: () => number;
  readonly #tails = new TailHub((stream, options) => this.#readRecords(stream, options));
  readonly #listener: AppendListener;
  readonly #poll: NodeJS.Timeout;
  readonly #pending = new Set<Promise<unknown>>();
  #state: 'open' | 'closing' | 'closed' = 'open';
  /** The connection holding this process's advisory locks (`hold`), and the streams they name. */
  #holder: Promise<PoolClient> | undefined;
  readonly #held = new Map<string, number>();

  readonly #listen: (channel: string, onMessage: (payload: string) => void, onResync: () => void) => AppendListener;

  constructor(options: {
    pool: Pool;
    schema: string;
    location: string;
    listen: (channel: string, onMessage: (payload: string) => void, onResync: () => void) => AppendListener;
    settings: PostgresEventStoreOptions;
  }) {
    const settings = options.settings;
    this.db = new PostgresQueries({ pool: options.pool, schema: options.schema, retryForMs: settings.retryForMs ?? 30_000 });
    this.blobs = new PostgresBlobStore(this.db);
    this.location = options.location;
    this.#sync = (settings.durability ?? 'sync') === 'sync';
    this.#clock = settings.clock ?? Date.now;
    this.#listen = options.listen;
    this.#listener = options.listen(appendChannel(options.schema), (stream) => this.#tails.notify(stream), () => this.#tails.notifyAll());
    this.#poll = setInterval(() => {
      if (this.#tails.active) this.#tails.notifyAll();
    }, settings.pollIntervalMs ?? 1_000);
    this.#poll.unref();
  }

  /**
   * LISTEN on `channel` on a dedicated connection (reconnecting when it drops): `onMessage` gets each payload,
   * `onResync` runs after every (re)connect, when messages may have been missed. Resolves with a stop function.
   */
  listen(channel: string, onMessage: (payload: string) => void, onResync: () => void): () => Promise<void> {
    this.#assertOpen();
    const listener = this.#listen(channel, onMessage, onResync);
    listener.start();
    return () => listener.stop();
  }

  async append(stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> {
    this.#assertOpen();
    assertStreamName(stream);
    assertExpectedSeq(options?.expectedSeq);
    assertFence(options);
    const batch = prepareBatch(stream, options.expectedSeq + 1, records, 'compact');
    const blobs = await prepareStreamBlobs(options.blobs);
    const parameters = appendParameters(stream, options, options.createdAt ?? this.#clock(), options.sync ?? this.#sync, batch, blobs);
    const text = APPEND_SQL(this.db.quoted);
    return this.#track(async () => {
      await this.db.retrying(
        stream,
        async () => {
          try {
            await this.db.pool.query(text, parameters);
            return true;
          } catch (error) {
            throw isConnectionError(error) ? error : storeErrorOf(error, stream, options.expectedSeq);
          }
        },
        // A connection lost while committing leaves the outcome unknown; if the retry then conflicts (or is fenced), the
        // lost attempt may have committed: it did if the stream holds exactly this batch's record ids at these seqs.
        async () => ((await this.#holdsBatch(stream, batch.envelopes)) ? true : undefined),
      );
      if (batch.envelopes.length > 0) this.#tails.notify(stream);
      return batch.envelopes;
    });
  }

  /**
   * Append inside a transaction the caller holds open on `client` (after `BEGIN`): the records are written by the same
   * function `append` calls, and are durable and visible only when the caller commits. For writing events together
   * with an application's own rows; resolves with the envelopes the commit will store.
   */
  async appendInTransaction(client: ClientBase, stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> {
    this.#assertOpen();
    assertStreamName(stream);
    assertExpectedSeq(options?.expectedSeq);
    assertFence(options);
    const batch = prepareBatch(stream, options.expectedSeq + 1, records, 'compact');
    const blobs = await prepareStreamBlobs(options.blobs);
    try {
      await client.query(APPEND_SQL(this.db.quoted), appendParameters(stream, options, options.createdAt ?? this.#clock(), options.sync ?? this.#sync, batch, blobs));
    } catch (error) {
      throw storeErrorOf(error, stream, options.expectedSeq);
    }
    return batch.envelopes;
  }

  async read(stream: string, options?: ReadOptions): Promise<RecordEnvelope[]> {
    this.#assertNotClosed();
    return this.#readRecords(stream, options);
  }

  tail(stream: string, from?: number): Observable<RecordEnvelope> {
    assertStreamName(stream);
    if (this.#state === 'open') this.#listener.start();
    return this.#tails.tail(stream, from);
  }

  async readAll(options?: ReadAllOptions): Promise<PositionedRecord[]> {
    this.#assertNotClosed();
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
    const { rows } = await this.db.query<{ tx: string; position: number; stream: string; seq: number; payload: Buffer; checksum: number }>(
      'readAll',
      (s) => `SELECT transaction_id::text AS tx, global_position AS position, stream, seq, payload, checksum FROM ${s}.records
        WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint) AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, global_position LIMIT $3`,
      [transaction, position, limit],
    );
    return rows.map((row) => ({ position: `${row.tx}:${row.position}`, record: decodeRow(row.stream, row.seq, row.payload, row.checksum) }));
  }

  async head(stream: string): Promise<number> {
    return (await this.info(stream))?.head ?? 0;
  }

  async info(stream: string): Promise<StreamInfo | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const { rows } = await this.db.query<StreamRow>('streams', (s) => `SELECT * FROM ${s}.streams WHERE stream = $1`, [stream]);
    return rows[0] === undefined ? undefined : describe(rows[0]);
  }

  async streams(): Promise<StreamInfo[]> {
    this.#assertNotClosed();
    const { rows } = await this.db.query<StreamRow>('streams', (s) => `SELECT * FROM ${s}.streams ORDER BY created_at, stream`);
    return rows.map(describe);
  }

  /**
   * One page of streams in creation order, optionally only those whose indexed status is `status`: answered from the
   * `streams` table's indexes, never by reading records. `after` is the last stream of the previous page.
   */
  async streamPage(options: StreamPageOptions = {}): Promise<StreamInfo[]> {
    this.#assertNotClosed();
    const limit = readAllLimit({ ...(options.limit === undefined ? {} : { limit: options.limit }) });
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (options.status !== undefined) {
      values.push(options.status);
      conditions.push(`status = $${values.length}`);
    }
    if (options.after !== undefined) {
      values.push(options.after.createdAt, options.after.stream);
      conditions.push(`(created_at, stream) > ($${values.length - 1}, $${values.length})`);
    }
    values.push(limit);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const { rows } = await this.db.query<StreamRow>('streams', (s) => `SELECT * FROM ${s}.streams ${where} ORDER BY created_at, stream LIMIT $${values.length}`, values);
    return rows.map(describe);
  }

  async fork(stream: string, atSeq: number, options?: ForkOptions): Promise<StreamInfo> {
    this.#assertOpen();
    assertStreamName(stream);
    const name = options?.newStream ?? forkStreamName(stream, typeof atSeq === 'number' ? atSeq : 0);
    assertStreamName(name);
    const createdAt = this.#clock();
    return this.#track(() =>
      this.db.retrying(
        name,
        () => forkStream(this.db, { stream, atSeq, name, createdAt }),
        async (error) => {
          const existing = (error as StoreError).code === 'STORE_STREAM_EXISTS' ? await this.info(name) : undefined;
          return existing?.forkedFrom?.stream === stream && existing.forkedFrom.seq === atSeq && existing.createdAt === createdAt ? existing : undefined;
        },
      ),
    );
  }

  async readBlob(stream: string, ref: string): Promise<Uint8Array> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const hex = refDigest(ref);
    const { rows } = await this.db.query<{ content: Buffer }>('blobs', (s) => `SELECT content FROM ${s}.stream_blobs WHERE stream = $1 AND hash = $2`, [stream, hex]);
    const stored = rows[0]?.content;
    if (stored === undefined) return this.blobs.get(ref as `artifact://${string}`);
    return verifiedBlob(ref, new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength));
  }

  async saveSnapshot(stream: string, snapshot: StoredSnapshot): Promise<void> {
    this.#assertOpen();
    assertStreamName(stream);
    const head = (await this.info(stream))?.head;
    if (head === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
    assertSnapshot(snapshot, head);
    const { seq, version, at, data } = snapshot;
    const encoded = encodeValue({ seq, version, at, data });
    const payload = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
    await this.#track(() =>
      this.db.query(
        stream,
        (s) => `INSERT INTO ${s}.snapshots (stream, seq, payload, checksum) VALUES ($1, $2, $3, $4) ON CONFLICT (stream, seq) DO UPDATE SET payload = EXCLUDED.payload, checksum = EXCLUDED.checksum`,
        [stream, seq, payload, crc32(payload)],
      ),
    );
  }

  async loadSnapshot(stream: string, options?: { atOrBefore?: number }): Promise<StoredSnapshot | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    assertSnapshotBound(options?.atOrBefore);
    const { rows } = await this.db.query<{ seq: number; payload: Buffer; checksum: number }>(
      stream,
      (s) => `SELECT seq, payload, checksum FROM ${s}.snapshots WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1`,
      [stream, options?.atOrBefore ?? MAX_SEQ],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (crc32(row.payload) !== row.checksum) throw new CorruptRecordError(stream, row.seq, 'snapshot checksum mismatch');
    return decodeValue(row.payload, { stream, seq: row.seq }) as StoredSnapshot;
  }

  /** Waits for this process's writes in flight, completes every tail after it drained, and closes the connections. */
  /**
   * Take the session-level advisory lock named after this schema and `stream` on this store's holding connection:
   * `STORE_LOCKED` when another connection (process) holds it. Holds of one stream are counted; the last one's end
   * unlocks it. See `EventStore.hold`; `close` or the loss of the connection ends every hold.
   */
  async hold(stream: string): Promise<() => Promise<void>> {
    this.#assertOpen();
    assertStreamName(stream);
    const holder = await this.#holderConnection();
    const count = this.#held.get(stream) ?? 0;
    if (count === 0) {
      const { rows } = await holder.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS held`, [`rein-stream:${this.db.schema}`, stream]);
      if (rows[0]?.held !== true) throw new StreamLockedError(stream);
    }
    this.#held.set(stream, (this.#held.get(stream) ?? 0) + 1);
    let ended = false;
    return async () => {
      if (ended || this.#state !== 'open' || this.#holder === undefined || (await this.#holder.catch(() => undefined)) !== holder) return;
      ended = true;
      const left = (this.#held.get(stream) ?? 1) - 1;
      if (left > 0) return void this.#held.set(stream, left);
      this.#held.delete(stream);
      await holder.query(`SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, [`rein-stream:${this.db.schema}`, stream]).catch(() => undefined);
    };
  }

  #holderConnection(): Promise<PoolClient> {
    this.#holder ??= this.db.pool.connect().then((client) => {
      // A lost holding connection loses its locks: forget them (a later hold takes them again on a new connection).
      client.on('error', () => {
        this.#held.clear();
        this.#holder = undefined;
      });
      return client;
    });
    const holder = this.#holder;
    holder.catch(() => {
      if (this.#holder === holder) this.#holder = undefined;
    });
    return holder;
  }

  async close(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'closing';
    try {
      await Promise.allSettled([...this.#pending]);
      const holder = this.#holder;
      this.#holder = undefined;
      this.#held.clear();
      if (holder) await holder.then((client) => client.release(true)).catch(() => undefined);
      await this.#tails.close();
      clearInterval(this.#poll);
      await this.#listener.stop();
      await this.db.pool.end();
    } finally {
      this.#state = 'closed';
    }
  }

  async #readRecords(stream: string, options: ReadOptions | undefined): Promise<RecordEnvelope[]> {
    this.#assertNotClosed();
    assertStreamName(stream);
    resolveReadRange(options, 0);
    const reverse = options?.reverse === true;
    const { rows } = await this.db.query<RecordRow & { head: number }>(
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
  }

  /** True when `stream` holds exactly these envelopes' ids at their seqs (a lost-connection append that committed). */
  async #holdsBatch(stream: string, envelopes: readonly RecordEnvelope[]): Promise<boolean> {
    const first = envelopes[0];
    if (first === undefined) return false;
    const { rows } = await this.db.query<{ seq: number; id: string }>(
      stream,
      (s) => `SELECT seq, id FROM ${s}.records WHERE stream = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
      [stream, first.seq, first.seq + envelopes.length - 1],
    );
    return rows.length === envelopes.length && rows.every((row, index) => row.id === envelopes[index]!.id && row.seq === envelopes[index]!.seq);
  }

  #track<T>(work: () => Promise<T>): Promise<T> {
    const running = work();
    this.#pending.add(running);
    const forget = () => this.#pending.delete(running);
    running.then(forget, forget);
    return running;
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw closedError();
  }

  #assertNotClosed(): void {
    if (this.#state === 'closed') throw closedError();
  }
}

/**
 * Open a PostgreSQL event store at `url` (`postgres://user[:password]@host[:port]/database[?schema=name]`): connect,
 * create or migrate the schema (see `migratePostgresSchema`), and return the store. The `pg` driver is loaded only
 * here, so programs that never open a PostgreSQL store never load it. Unreachable server: `STORE_UNAVAILABLE` after
 * `retryForMs`.
 */
export async function openPostgresEventStore(url: string, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
  const location = parsePostgresUrl(url);
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')),
  };
  const config: PoolConfig = {
    connectionString: location.connectionString,
    max: options.poolSize ?? 10,
    application_name: options.applicationName ?? 'rein',
    types: types as PoolConfig['types'],
  };
  const pool = new pg.Pool(config);
  // An idle connection dropped by the server (a restart) is discarded by the pool; the next query reconnects.
  pool.on('error', () => undefined);
  const store = new PostgresEventStore({
    pool,
    schema: location.schema,
    location: location.display,
    settings: options,
    listen: (channel, onMessage, onResync) =>
      new AppendListener({
        Client: pg.Client,
        config: { connectionString: location.connectionString, application_name: `${config.application_name}-listen`, types: config.types },
        channel,
        onStream: onMessage,
        onResync,
      }),
  });
  try {
    store.migration = await store.db.retrying('migrate', () => migratePostgresSchema(pool, location.schema));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return store;
}
