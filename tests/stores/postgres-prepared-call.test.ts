import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError } from '../../stores/postgres/postgres-errors.js';
import { PreparedCall, runPreparedCall } from '../../stores/postgres/postgres-prepared-call.js';
import { describePostgres, postgresUrl } from '../support/postgres.js';

/** Runs `call` on one held client (callback style, as the pool does). */
const onClient = (client: pg.PoolClient, call: PreparedCall): Promise<string | null> =>
  new Promise((resolve, reject) => {
    call.callback = (error, value) => (error ? reject(error) : resolve(value ?? null));
    client.query(call);
  });

const parsedOf = (client: pg.PoolClient): Record<string, string> => (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;

describePostgres('PreparedCall (the append request the store writes itself)', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('parses once per connection, then binds text, numbers, booleans, NULL and binary bytes', async () => {
    const client = await pool.connect();
    try {
      const text = "SELECT $1::text || '/' || $2::bigint || '/' || $3::boolean || '/' || coalesce($4::text, 'null') || '/' || encode($5::bytea, 'hex') || '/' || $6::double precision";
      const values = (word: string) => [word, 9007199254740991, true, null, new Uint8Array([0, 1, 254, 255]), 1.5] as const;
      expect(await onClient(client, new PreparedCall('t_call', text, values('héllo')))).toBe('héllo/9007199254740991/true/null/0001feff/1.5');
      expect(parsedOf(client)['t_call']).toBe(text);
      expect(await onClient(client, new PreparedCall('t_call', text, values('again')))).toBe('again/9007199254740991/true/null/0001feff/1.5');
      expect(await onClient(client, new PreparedCall('t_none', 'SELECT NULL::text WHERE $1::int > 0', [0]))).toBeNull();
      expect(await onClient(client, new PreparedCall('t_null', 'SELECT NULL::text', []))).toBeNull();
    } finally {
      client.release();
    }
  });

  it("a server error fails the call with the server's code and leaves the connection usable; another text under a known name is refused", async () => {
    const client = await pool.connect();
    try {
      await expect(onClient(client, new PreparedCall('t_div', 'SELECT (1 / $1::int)::text', [0]))).rejects.toMatchObject({ code: '22012' });
      expect(await onClient(client, new PreparedCall('t_div', 'SELECT (1 / $1::int)::text', [1]))).toBe('1');
      await expect(onClient(client, new PreparedCall('t_div', 'SELECT 2', []))).rejects.toThrow(/another text/);
      expect(await onClient(client, new PreparedCall('t_div', 'SELECT (1 / $1::int)::text', [1]))).toBe('1');
      // A statement that fails to parse is not remembered: the next call parses again.
      await expect(onClient(client, new PreparedCall('t_bad', 'SELEC 1', []))).rejects.toMatchObject({ code: '42601' });
      expect(parsedOf(client)['t_bad']).toBeUndefined();
    } finally {
      client.release();
    }
  });

  it('through the pool: a connection the server ended fails the call with a connection error, and the next call parses on a fresh one', async () => {
    const text = 'SELECT pg_backend_pid()::text';
    const first = await runPreparedCall(pool, new PreparedCall('t_pid', text, []));
    const admin = new pg.Client({ connectionString: postgresUrl() });
    await admin.connect();
    try {
      const client = await pool.connect();
      // A checked-out client reports the server's FATAL as an 'error' event too (the pool listens only while idle or in pool.query).
      client.on('error', () => undefined);
      const pid = await onClient(client, new PreparedCall('t_pid', text, []));
      await admin.query('SELECT pg_terminate_backend($1::int)', [Number(pid)]);
      const failed = await onClient(client, new PreparedCall('t_pid', text, [])).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isConnectionError(failed)).toBe(true);
      client.release(true);
      const next = await runPreparedCall(pool, new PreparedCall('t_pid', text, []));
      expect(next).not.toBe(pid);
      expect(first).toMatch(/^\d+$/);
    } finally {
      await admin.end();
    }
  });
});

describe('PreparedCall without a server', () => {
  it('refuses a socket that is no longer writable with a connection error (so the store retries), writing nothing', () => {
    let written = 0;
    const connection = { stream: { writable: false, write: () => void written++ }, parsedStatements: {} } as unknown as pg.Connection;
    const refused = new PreparedCall('t', 'SELECT 1', []).submit(connection);
    expect(refused).toBeInstanceOf(Error);
    expect(isConnectionError(refused)).toBe(true);
    expect(written).toBe(0);
  });
});
