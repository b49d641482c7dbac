import { StoreError } from '../store-errors.js';
import { assertStreamName } from '../stream-names.js';
import { queueChannel } from './postgres-migrate.js';
import type { PostgresEventStore } from './postgres-event-store.js';
import type { EventStore } from '../event-store.js';

/** Where a queued session is: waiting for a worker, leased to one, waiting for a person, finished, or failed to start. */
export type QueueState = 'queued' | 'running' | 'parked' | 'done' | 'failed';

/** A lease on one session: the owner and the epoch every fenced append of that session carries. */
export interface SessionLease {
  session: string;
  owner: string;
  epoch: number;
}

/** A session a worker claimed: its lease, its spec, and the answers that arrived for it while nobody held it. */
export interface ClaimedSession {
  lease: SessionLease;
  spec: unknown;
  answers: unknown[];
}

/** One row of the queue, with its lease. */
export interface QueueEntry {
  session: string;
  state: QueueState;
  spec: unknown;
  answers: unknown[];
  claims: number;
  lease?: { owner: string; epoch: number; expiresAt: number };
  /** Why its last start failed (`failed`: why it never will; `queued`: why the last try did not). */
  failure?: string;
  /** A session whose start failed is not claimed again before this time (ms since the epoch). */
  notBefore?: number;
}

/** A queued session no worker has started yet (its stream holds no record): what `rein sessions` lists as `queued` (or `failed`). */
export interface WaitingEntry {
  session: string;
  state: QueueState;
  task: string;
  enqueuedAt: number;
  /** Why no worker could start it (state `failed`), or why the last try did not (`queued`, backing off). */
  failure?: string;
}

interface EntryRow {
  session: string;
  state: QueueState;
  spec: unknown;
  answers: unknown[];
  claims: number;
  owner: string | null;
  epoch: number | null;
  expires_at: Date | null;
  failure: string | null;
  not_before: Date | null;
}

/** The session queue of `store` when it has one (a PostgreSQL store), else undefined. */
export const sessionQueueOf = (store: EventStore): PostgresSessionQueue | undefined =>
  store.capabilities.fencing && typeof (store as Partial<PostgresEventStore>).listen === 'function' ? new PostgresSessionQueue(store as PostgresEventStore) : undefined;

/**
 * The session queue of a PostgreSQL store (docs/postgres.md: *Workers*): sessions submitted to run on workers, leased with an
 * owner, an expiry and an epoch that rises with every claim; the event store checks the epoch inside every fenced
 * append. All state lives in the database: any number of workers, on any machines, share one queue.
 */
export class PostgresSessionQueue {
  readonly #store: PostgresEventStore;

  constructor(store: PostgresEventStore) {
    this.#store = store;
  }

  /** Queue a session; `STORE_STREAM_EXISTS` when it is already queued or its stream already exists. */
  async enqueue(session: string, spec: unknown): Promise<void> {
    assertStreamName(session);
    if ((await this.#store.head(session)) > 0) throw new StoreError('STORE_STREAM_EXISTS', `session ${session} already exists`);
    const { rows } = await this.#store.db.query(
      session,
      (s) => `WITH queued AS (INSERT INTO ${s}.queue (session, state, spec) VALUES ($1, 'queued', $2) ON CONFLICT (session) DO NOTHING RETURNING session)
        SELECT session, pg_notify($3, session) FROM queued`,
      [session, JSON.stringify(spec), queueChannel(this.#store.db.schema)],
    );
    if (rows.length === 0) throw new StoreError('STORE_STREAM_EXISTS', `session ${session} is already queued`);
  }

  /**
   * Lease the oldest runnable session (queued, or running under an expired lease), or only `session` when given, to
   * `owner` for `leaseMs`, with the next epoch. Undefined when nothing is runnable.
   */
  async claim(owner: string, leaseMs: number, session?: string): Promise<ClaimedSession | undefined> {
    const { rows } = await this.#store.db.query<{ session: string; epoch: number; spec: unknown; answers: unknown[] }>(
      'queue',
      (s) => `SELECT * FROM ${s}.claim($1, $2, $3)`,
      [owner, Math.round(leaseMs), session ?? null],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { lease: { session: row.session, owner, epoch: row.epoch }, spec: row.spec, answers: row.answers };
  }

  /** Extend a lease by `leaseMs` from now; false when it was lost (taken over, or released). */
  async renew(lease: SessionLease, leaseMs: number): Promise<boolean> {
    const { rows } = await this.#store.db.query(
      lease.session,
      (s) => `UPDATE ${s}.leases SET expires_at = clock_timestamp() + $4 * interval '1 millisecond' WHERE stream = $1 AND owner = $2 AND epoch = $3 RETURNING stream`,
      [lease.session, lease.owner, lease.epoch, Math.round(leaseMs)],
    );
    return rows.length > 0;
  }

  /**
   * Let go of a lease, leaving the session `done`, `queued` (for another worker) or `parked` (waiting for a person).
   * Parking while answers are waiting keeps the lease and returns `running`: take the answers and go on. Undefined
   * when the lease was already lost.
   */
  async release(lease: SessionLease, state: 'done' | 'queued' | 'parked'): Promise<QueueState | undefined> {
    const { rows } = await this.#store.db.query<{ state: QueueState | null }>(
      lease.session,
      (s) => `SELECT ${s}.release($1, $2, $3, $4) AS state`,
      [lease.session, lease.owner, lease.epoch, state],
    );
    return rows[0]?.state ?? undefined;
  }

  /**
   * Let go of a lease after the session could not start: `failed` with `failure` (no later try would do better), or
   * `queued` again with `failure` and not claimed before `delayMs` from now (a backoff). Undefined when the lease was
   * already lost.
   */
  async releaseFailed(lease: SessionLease, outcome: { state: 'failed' | 'queued'; failure: string; delayMs?: number }): Promise<QueueState | undefined> {
    const { rows } = await this.#store.db.query<{ state: QueueState | null }>(
      lease.session,
      (s) => `SELECT ${s}.release_failed($1, $2, $3, $4, $5, $6) AS state`,
      [lease.session, lease.owner, lease.epoch, outcome.state, outcome.failure, Math.max(0, Math.round(outcome.delayMs ?? 0))],
    );
    return rows[0]?.state ?? undefined;
  }

  /** The answers waiting for a leased session, oldest first (they stay until `dropAnswers`). */
  async answers(lease: SessionLease): Promise<unknown[]> {
    const entry = await this.entry(lease.session);
    return entry?.lease?.owner === lease.owner && entry.lease.epoch === lease.epoch ? entry.answers : [];
  }

  /** Remove the first `count` answers of a leased session once they were applied. */
  async dropAnswers(lease: SessionLease, count: number): Promise<void> {
    if (count <= 0) return;
    await this.#store.db.query(
      lease.session,
      (s) => `UPDATE ${s}.queue q SET answers = coalesce((SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(q.answers) WITH ORDINALITY AS t(e, i) WHERE i > $4), '[]')
        WHERE q.session = $1 AND EXISTS (SELECT 1 FROM ${s}.leases l WHERE l.stream = $1 AND l.owner = $2 AND l.epoch = $3)`,
      [lease.session, lease.owner, lease.epoch, count],
    );
  }

  /**
   * Leave an answer for a queued session (an approval reply, a confirmation): it waits in the queue until the worker
   * that runs the session applies it; a parked session becomes runnable again. With `once` (the answer's key, such as
   * `{ approvalId }`), an answer already waiting with that key is not added again (checked in the same statement, so
   * two concurrent answers cannot both be taken). Returns the session's state, `already-answered`, or undefined when
   * the session is not queued.
   */
  async answer(session: string, answer: unknown, options: { once?: Record<string, string> } = {}): Promise<QueueState | 'already-answered' | undefined> {
    const { rows } = await this.#store.db.query<{ state: QueueState }>(
      session,
      (s) => `WITH answered AS (
          UPDATE ${s}.queue SET answers = answers || jsonb_build_array($2::jsonb), state = CASE WHEN state = 'parked' THEN 'queued' ELSE state END, updated_at = clock_timestamp()
          WHERE session = $1 AND ($4::jsonb IS NULL OR NOT answers @> $4::jsonb) RETURNING session, state)
        SELECT state, pg_notify($3, session) FROM answered`,
      [session, JSON.stringify(answer), queueChannel(this.#store.db.schema), options.once === undefined ? null : JSON.stringify([options.once])],
    );
    if (rows[0] !== undefined) return rows[0].state;
    return options.once !== undefined && (await this.entry(session)) !== undefined ? 'already-answered' : undefined;
  }

  /** The queue entry of `session` with its lease, or undefined when it was never queued. */
  async entry(session: string): Promise<QueueEntry | undefined> {
    const { rows } = await this.#store.db.query<EntryRow>(
      session,
      (s) => `SELECT q.session, q.state, q.spec, q.answers, q.claims, q.failure, q.not_before, l.owner, l.epoch, l.expires_at FROM ${s}.queue q LEFT JOIN ${s}.leases l ON l.stream = q.session WHERE q.session = $1`,
      [session],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      session: row.session,
      state: row.state,
      spec: row.spec,
      answers: row.answers,
      claims: row.claims,
      ...(row.owner !== null && row.epoch !== null && row.expires_at !== null ? { lease: { owner: row.owner, epoch: row.epoch, expiresAt: row.expires_at.getTime() } } : {}),
      ...(row.failure === null ? {} : { failure: row.failure }),
      ...(row.not_before === null ? {} : { notBefore: row.not_before.getTime() }),
    };
  }

  /**
   * Queue entries whose session has no record yet (queued, or claimed a moment ago), oldest first, page by page:
   * `after` is the last entry of the previous page. Sessions that have records are listed from their streams instead.
   */
  async waiting(options: { after?: WaitingEntry; limit?: number } = {}): Promise<WaitingEntry[]> {
    const after = options.after;
    const { rows } = await this.#store.db.query<{ session: string; state: QueueState; task: string | null; enqueued: number; failure: string | null }>(
      'queue',
      (s) => `SELECT q.session, q.state, q.spec->>'task' AS task, (extract(epoch FROM q.enqueued_at) * 1000)::float8 AS enqueued, q.failure FROM ${s}.queue q
        WHERE q.state IN ('queued', 'running', 'failed') AND NOT EXISTS (SELECT 1 FROM ${s}.streams st WHERE st.stream = q.session AND st.head > 0)
          AND ($1::float8 IS NULL OR ((extract(epoch FROM q.enqueued_at) * 1000)::float8, q.session) > ($1::float8, $2::text))
        ORDER BY q.enqueued_at, q.session LIMIT $3`,
      [after?.enqueuedAt ?? null, after?.session ?? '', options.limit ?? 200],
    );
    return rows.map((row) => ({ session: row.session, state: row.state, task: row.task ?? '', enqueuedAt: row.enqueued, ...(row.failure === null ? {} : { failure: row.failure }) }));
  }

  /**
   * Milliseconds until the earliest lease of a running session expires or a backing-off session may be claimed again
   * (0 when one already may), undefined when neither is waiting.
   */
  async nextExpiryMs(): Promise<number | undefined> {
    const { rows } = await this.#store.db.query<{ ms: number | null }>(
      'queue',
      (s) => `SELECT greatest(0, extract(epoch FROM least(
          (SELECT min(l.expires_at) FROM ${s}.queue q JOIN ${s}.leases l ON l.stream = q.session WHERE q.state = 'running' AND l.owner IS NOT NULL),
          (SELECT min(q.not_before) FROM ${s}.queue q WHERE q.state = 'queued' AND q.not_before IS NOT NULL)) - clock_timestamp()) * 1000)::float8 AS ms`,
    );
    return rows[0]?.ms ?? undefined;
  }

  /** Counts of queue entries by state. */
  async counts(): Promise<Record<QueueState, number>> {
    const { rows } = await this.#store.db.query<{ state: QueueState; n: number }>('queue', (s) => `SELECT state, count(*)::int AS n FROM ${s}.queue GROUP BY state`);
    const counts: Record<QueueState, number> = { queued: 0, running: 0, parked: 0, done: 0, failed: 0 };
    for (const row of rows) counts[row.state] = row.n;
    return counts;
  }

  /** Call `onRunnable` whenever a session may have become runnable (a notification, or a reconnect). Returns a stop function. */
  watch(onRunnable: () => void): () => Promise<void> {
    return this.#store.listen(queueChannel(this.#store.db.schema), onRunnable, onRunnable);
  }
}
