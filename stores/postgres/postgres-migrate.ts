import type { Pool } from 'pg';
import { StoreError } from '../store-errors.js';
import { migrations, schemaVersion } from './postgres-migrations.js';

/** The result of `migratePostgresSchema`: the version before and after, and the versions applied now. */
export interface MigrationReport {
  schema: string;
  from: number;
  to: number;
  applied: number[];
}

const quoted = (schema: string): string => `"${schema}"`;

/** The notification channel appends to `schema` signal on (at most 63 bytes, like every identifier). */
export const appendChannel = (schema: string): string => `${schema}_appended`;

/** The notification channel that says a session became runnable (queued, answered, handed back). */
export const queueChannel = (schema: string): string => `${schema}_queued`;

/**
 * Create or migrate rein's schema: every migration not yet recorded in `<schema>.schema_migrations` is applied in
 * order, each in its own transaction, under an advisory lock so concurrent openers migrate once. Idempotent. A schema
 * migrated by a newer rein (a version this build does not know) is `STORE_VERSION_UNSUPPORTED`.
 */
export const migratePostgresSchema = async (pool: Pool, schema: string): Promise<MigrationReport> => {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(hashtext($1))`, [`rein-migrate:${schema}`]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${quoted(schema)}.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
      );
      const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${quoted(schema)}.schema_migrations ORDER BY version`);
      const done = new Set(rows.map((row) => Number(row.version)));
      const from = Math.max(0, ...done);
      if (from > schemaVersion) {
        throw new StoreError('STORE_VERSION_UNSUPPORTED', `schema ${schema} is at version ${from}, newer than this build knows (${schemaVersion}): upgrade rein`);
      }
      const applied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        const sql = migration.sql.replaceAll('{s}', quoted(schema)).replaceAll('{channel}', appendChannel(schema)).replaceAll('{queue_channel}', queueChannel(schema));
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query(`INSERT INTO ${quoted(schema)}.schema_migrations (version, description) VALUES ($1, $2)`, [migration.version, migration.description]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
        applied.push(migration.version);
      }
      return { schema, from, to: Math.max(from, schemaVersion), applied };
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`rein-migrate:${schema}`]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
};
