import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresEventStore } from '../../stores/index.js';
import type { PostgresEventStore } from '../../stores/index.js';
import { blake3Hex, refDigest } from '../../stores/blob-hash.js';
import { describeEventStoreConformance } from './event-store.conformance.js';
import { draft, drafts, expectCode } from './store-test-support.js';
import { describePostgres, freshSchemaUrl, postgresUrl } from '../support/postgres.js';
import { postgresForge, postgresRawChain } from './postgres-raw-chain.js';
import { migrations } from '../../stores/postgres/postgres-migrations.js';

const schemaOf = (url: string): string => new URL(url).searchParams.get('schema')!;

describePostgres('PostgreSQL event store', () => {
  let admin: pg.Pool;
  beforeAll(() => {
    admin = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
  });
  afterAll(async () => {
    await admin.end();
  });
  /** Flip the last bit of a bytea column of one row: the stored bytes no longer match their checksum. */
  const flipLastBit = (table: string, column: string) =>
    `UPDATE ${table} SET ${column} = set_byte(${column}, length(${column}) - 1, get_byte(${column}, length(${column}) - 1) # 1)`;

  describeEventStoreConformance({
    name: 'postgres',
    async open() {
      const url = freshSchemaUrl();
      const schema = `"${schemaOf(url)}"`;
      let store = await openPostgresEventStore(url);
      return {
        store,
        corrupt: async (stream, seq) => void (await admin.query(`${flipLastBit(`${schema}.records`, 'payload')} WHERE stream = $1 AND seq = $2`, [stream, seq])),
        corruptBlob: async (ref) => void (await admin.query(`${flipLastBit(`${schema}.blobs`, 'content')} WHERE hash = $1`, [refDigest(ref)])),
        corruptStreamBlob: async (stream, ref) => void (await admin.query(`${flipLastBit(`${schema}.stream_blobs`, 'content')} WHERE stream = $1 AND hash = $2`, [stream, refDigest(ref)])),
        reopen: async () => {
          await store.close();
          store = await openPostgresEventStore(url);
          return store;
        },
        rawChain: (stream) => postgresRawChain(admin, schema, stream),
        forge: async (stream, entries, options) => {
          await postgresForge(admin, schema, stream, entries, options);
          return store;
        },
        withKey: (chainKey) => openPostgresEventStore(url, { chainKey }),
      };
    },
  });

  describe('what only a server has', () => {
    const stores: PostgresEventStore[] = [];
    const open = async (url = freshSchemaUrl()) => {
      const store = await openPostgresEventStore(url);
      stores.push(store);
      return store;
    };
    afterAll(async () => {
      await Promise.all(stores.map((store) => store.close()));
    });

    it('holds a stream for one store at a time (an advisory lock per stream), until release or close', async () => {
      const url = freshSchemaUrl();
      const first = await open(url);
      const second = await open(url);
      const once = await first.hold('held');
      const twice = await first.hold('held');
      await expectCode(second.hold('held'), 'STORE_LOCKED');
      await second.hold('other');
      await once();
      await once();
      await expectCode(second.hold('held'), 'STORE_LOCKED');
      await twice();
      await second.hold('held');
      await expectCode(first.hold('held'), 'STORE_LOCKED');
      await second.close();
      // The server frees a closed connection's advisory locks when its backend exits, a moment after the client ends.
      for (let attempt = 0; ; attempt++) {
        try {
          await first.hold('held');
          break;
        } catch (error) {
          if ((error as { code?: string }).code !== 'STORE_LOCKED' || attempt >= 100) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      // Another schema is another store: its stream of the same name is not held.
      const elsewhere = await open();
      await elsewhere.hold('held');
    });

    it('never lets readAll pass a record whose transaction commits late', async () => {
      const url = freshSchemaUrl();
      const store = await open(url);
      const reader = await open(url);
      await store.append('early', drafts(1, 1), { expectedSeq: 0 });
      const seen = await reader.readAll();
      expect(seen.map((entry) => entry.record.id)).toEqual(['r-1']);
      const slow = await store.db.pool.connect();
      try {
        await slow.query('BEGIN');
        // The slow transaction takes its id and global position first, then a fast one commits before it does.
        await store.appendInTransaction(slow, 'slow', [draft(10)], { expectedSeq: 0 });
        await store.append('fast', [draft(20)], { expectedSeq: 0 });
        const whileOpen = await reader.readAll({ after: seen[0]!.position });
        expect(whileOpen).toEqual([]);
        await slow.query('COMMIT');
      } finally {
        slow.release();
      }
      const after = await reader.readAll({ after: seen[0]!.position });
      expect(after.map((entry) => entry.record.id)).toEqual(['r-10', 'r-20']);
    });

    it('rolls back everything when the connection drops in the middle of an append', async () => {
      const url = freshSchemaUrl();
      const store = await open(url);
      await store.append('s', drafts(1, 5), { expectedSeq: 0 });
      const blob = 'the blob the append waits on';
      const hex = await blake3Hex(Buffer.from(blob));
      const holder = await admin.connect();
      try {
        // Hold an uncommitted row with the blob's key: the append inserts its records, then blocks on that row.
        await holder.query('BEGIN');
        await holder.query(`INSERT INTO "${schemaOf(url)}".stream_blobs (stream, hash, content) VALUES ('s', $1, '\\x00')`, [hex]);
        const appending = store.append('s', drafts(6, 3), { expectedSeq: 5, blobs: [blob] }).then(
          () => 'stored',
          (error: { code?: string }) => error.code,
        );
        let blocked: number | undefined;
        while (blocked === undefined) {
          const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%.append(%'`);
          blocked = rows[0]?.pid;
          if (blocked === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await admin.query('SELECT pg_terminate_backend($1)', [blocked]);
        await holder.query('ROLLBACK');
        // The store retries on a fresh connection; the first attempt's records were rolled back with its connection.
        expect(await appending).toBe('stored');
      } finally {
        holder.release();
      }
      const records = await store.read('s');
      expect(records.map((record) => record.id)).toEqual(['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-6', 'r-7', 'r-8']);
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schemaOf(url)}".records WHERE stream = 's'`);
      expect(rows[0].n).toBe(8);
    });

    it('fences appends by lease owner and epoch inside the append', async () => {
      const url = freshSchemaUrl();
      const store = await open(url);
      await store.append('s', drafts(1, 1), { expectedSeq: 0 });
      await admin.query(`INSERT INTO "${schemaOf(url)}".leases (stream, owner, epoch, expires_at) VALUES ('s', 'w1', 1, now() + interval '1 minute')`);
      await store.append('s', drafts(2, 1), { expectedSeq: 1, fence: { owner: 'w1', epoch: 1 } });
      await expectCode(store.append('s', drafts(3, 1), { expectedSeq: 2 }), 'STORE_FENCED');
      await admin.query(`UPDATE "${schemaOf(url)}".leases SET owner = 'w2', epoch = 2 WHERE stream = 's'`);
      await expectCode(store.append('s', drafts(3, 1), { expectedSeq: 2, fence: { owner: 'w1', epoch: 1 } }), 'STORE_FENCED');
      await expectCode(store.append('other', drafts(1, 1), { expectedSeq: 0, fence: { owner: 'w1', epoch: 1 } }), 'STORE_FENCED');
      await store.append('s', drafts(3, 1), { expectedSeq: 2, fence: { owner: 'w2', epoch: 2 } });
      expect(await store.head('s')).toBe(3);
    });

    it('migration 6 adds the stream summary to a database written before it: old streams have none, appends keep one', async () => {
      const url = freshSchemaUrl();
      const schema = schemaOf(url);
      const quotedSchema = `"${schema}"`;
      // A database at version 5 with a stream in it, written through the 20-argument append an older build calls.
      await admin.query(`CREATE SCHEMA ${quotedSchema}`);
      await admin.query(`CREATE TABLE ${quotedSchema}.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
      for (const migration of migrations.filter((entry) => entry.version <= 5)) {
        await admin.query(migration.sql.replaceAll('{s}', quotedSchema).replaceAll('{channel}', `${schema}_appended`).replaceAll('{queue_channel}', `${schema}_queued`));
        await admin.query(`INSERT INTO ${quotedSchema}.schema_migrations (version, description) VALUES ($1, $2)`, [migration.version, migration.description]);
      }
      await admin.query(
        `SELECT ${quotedSchema}.append('s-old', 0, NULL, NULL, 1, true, NULL, ARRAY['r1'], ARRAY['user.message'], ARRAY[1], ARRAY[1.0::double precision], ARRAY['root'], ARRAY[NULL::text], ARRAY[NULL::text], ARRAY['\\x00'::bytea], ARRAY[0::bigint], ARRAY[]::text[], ARRAY[]::bytea[], ARRAY[NULL::bytea], NULL)`,
      );
      const store = await openPostgresEventStore(url);
      try {
        const { rows } = await admin.query(`SELECT version FROM ${quotedSchema}.schema_migrations ORDER BY version`);
        expect(rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await store.info('s-old')).toMatchObject({ stream: 's-old', head: 1 });
        expect((await store.info('s-old'))?.summary).toBeUndefined();
        await store.append('s-new', drafts(1, 2), { expectedSeq: 0, summary: { calls: 1, models: [{ model: 'm', calls: 1 }] } });
        expect((await store.info('s-new'))?.summary).toEqual({ seq: 2, value: { calls: 1, models: [{ model: 'm', calls: 1 }] } });
        expect((await store.streams()).find((info) => info.stream === 's-new')?.summary?.seq).toBe(2);
      } finally {
        await store.close();
      }
    });

    it('migrates once and refuses a schema newer than this build', async () => {
      const url = freshSchemaUrl();
      const [first, second] = await Promise.all([open(url), open(url)]);
      expect(await first.head('none')).toBe(0);
      expect(await second.head('none')).toBe(0);
      const { rows } = await admin.query(`SELECT version FROM "${schemaOf(url)}".schema_migrations ORDER BY version`);
      expect(rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6]);
      await admin.query(`INSERT INTO "${schemaOf(url)}".schema_migrations (version, description) VALUES (99, 'from the future')`);
      await expectCode(openPostgresEventStore(url), 'STORE_VERSION_UNSUPPORTED');
    });
  });
});
