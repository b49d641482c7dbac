import type { PoolClient } from 'pg';
import { StreamLockedError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';

/**
 * This process's holds on streams (`EventStore.hold`): session-level advisory locks named after the schema and the
 * stream, all taken on one holding connection of the pool. Holds of one stream are counted; the last one's end
 * unlocks it. Losing the holding connection loses its locks, and `releaseAll` (the store's `close`) ends every hold.
 */
export class StreamHolds {
  readonly #db: PostgresQueries;
  readonly #isOpen: () => boolean;
  /** The connection holding the advisory locks, and the streams they name. */
  #holder: Promise<PoolClient> | undefined;
  readonly #held = new Map<string, number>();

  /** `isOpen`: whether the store is still open (a hold ended after `close` began does nothing). */
  constructor(db: PostgresQueries, isOpen: () => boolean) {
    this.#db = db;
    this.#isOpen = isOpen;
  }

  /** Take the lock on `stream` (`STORE_LOCKED` when another connection holds it); resolves with its end. */
  async hold(stream: string): Promise<() => Promise<void>> {
    const holder = await this.#holderConnection();
    const count = this.#held.get(stream) ?? 0;
    if (count === 0) {
      const { rows } = await holder.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS held`, [`rein-stream:${this.#db.schema}`, stream]);
      if (rows[0]?.held !== true) throw new StreamLockedError(stream);
    }
    this.#held.set(stream, (this.#held.get(stream) ?? 0) + 1);
    let ended = false;
    return async () => {
      if (ended || !this.#isOpen() || this.#holder === undefined || (await this.#holder.catch(() => undefined)) !== holder) return;
      ended = true;
      const left = (this.#held.get(stream) ?? 1) - 1;
      if (left > 0) return void this.#held.set(stream, left);
      this.#held.delete(stream);
      await holder.query(`SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, [`rein-stream:${this.#db.schema}`, stream]).catch(() => undefined);
    };
  }

  /** Forget every hold and give the holding connection back to the pool closed, which unlocks them all. */
  async releaseAll(): Promise<void> {
    const holder = this.#holder;
    this.#holder = undefined;
    this.#held.clear();
    if (holder) await holder.then((client) => client.release(true)).catch(() => undefined);
  }

  #holderConnection(): Promise<PoolClient> {
    this.#holder ??= this.#db.pool.connect().then((client) => {
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
}
