import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { StoreError } from '../store-errors.js';
import { isConnectionError, storeErrorOf } from './postgres-errors.js';

/** Options of `PostgresQueries`. */
export interface PostgresQueriesOptions {
  pool: Pool;
  schema: string;
  /** How long an operation keeps retrying while the server is unreachable (ms). */
  retryForMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The store's access to PostgreSQL: SQL written against the quoted schema, driver errors mapped to typed store
 * errors, and operations retried with backoff while the server is unreachable (a restart, a dropped connection), up
 * to `retryForMs`; then `STORE_UNAVAILABLE`.
 */
export class PostgresQueries {
  readonly pool: Pool;
  readonly schema: string;
  /** The schema as a quoted identifier, for SQL text. */
  readonly quoted: string;
  readonly #retryForMs: number;

  constructor(options: PostgresQueriesOptions) {
    this.pool = options.pool;
    this.schema = options.schema;
    this.quoted = `"${options.schema}"`;
    this.#retryForMs = options.retryForMs;
  }

  /** One statement, retried on connection errors (use only for statements that are safe to run twice). */
  query<Row extends QueryResultRow = QueryResultRow>(subject: string, sql: (schema: string) => string, values?: unknown[]): Promise<QueryResult<Row>> {
    const text = sql(this.quoted);
    return this.retrying(subject, () => this.pool.query<Row>(text, values));
  }

  /** Run `work` in one transaction on one connection (committed when it resolves, rolled back when it throws). */
  async transaction<T>(subject: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.retrying(subject, async () => {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        broken = isConnectionError(error);
        if (!broken) await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release(broken);
      }
    });
  }

  /**
   * Run `attempt` until it succeeds, throws something other than a connection error, or `retryForMs` passed.
   * `recover` (optional) is asked, after an attempt failed for a lost connection and a later one failed otherwise,
   * whether the lost attempt committed after all; its value is then the result.
   */
  async retrying<T>(subject: string, attempt: () => Promise<T>, recover?: (error: unknown) => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + this.#retryForMs;
    let delay = 50;
    let lostOne = false;
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        if (!isConnectionError(error)) {
          const mapped = storeErrorOf(error, subject);
          if (lostOne && recover) {
            const recovered = await recover(mapped);
            if (recovered !== undefined) return recovered;
          }
          throw mapped;
        }
        lostOne = true;
        if (Date.now() + delay > deadline) throw storeErrorOf(error, subject);
        await sleep(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }
}

/** Raised by operations on a closed store. */
export const closedError = (): StoreError => new StoreError('STORE_CLOSED', 'the store is closed');
