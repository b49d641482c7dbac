import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BinaryArrays } from '../../stores/postgres/postgres-binary-arrays.js';
import { describePostgres, postgresUrl } from '../support/postgres.js';
import { propertyRuns } from '../support/temp-dir.js';

// PostgreSQL text cannot hold NUL; everything else (any code point, lone surrogates as U+FFFD) goes as UTF-8.
const text = fc.string({ unit: 'binary', maxLength: 40 }).map((value) => value.replaceAll('\0', ''));
const utf8 = (value: string): string => Buffer.from(value, 'utf8').toString('utf8');

describePostgres('binary array parameters', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('the server reads back every array as written (text with NULLs, int4, int8, float8, bytea, empty ones)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(text, { nil: null }), { maxLength: 5 }),
        fc.array(fc.integer(), { maxLength: 5 }),
        fc.array(fc.maxSafeInteger().filter((value) => value >= Number.MIN_SAFE_INTEGER), { maxLength: 5 }),
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 5 }),
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 5 }),
        async (texts, int4s, int8s, float8s, byteas) => {
          const arrays = new BinaryArrays();
          const { rows } = await pool.query({
            text: 'SELECT $1::text[] AS texts, $2::integer[] AS int4s, $3::bigint[]::text[] AS int8s, $4::double precision[] AS float8s, $5::bytea[] AS byteas',
            values: [arrays.texts(texts), arrays.int4s(int4s), arrays.int8s(int8s), arrays.float8s(float8s), arrays.byteas(byteas)],
          });
          const row = rows[0]!;
          expect(row.texts).toEqual(texts.map((value) => (value === null ? null : utf8(value))));
          expect(row.int4s).toEqual(int4s);
          expect(row.int8s.map(Number)).toEqual(int8s);
          expect(row.float8s).toEqual(float8s.map((value) => (Object.is(value, -0) ? -0 : value)));
          expect(row.byteas.map((value: Buffer) => [...value])).toEqual(byteas.map((value) => [...value]));
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });

  it('arrays larger than a chunk get their own memory and stay intact', async () => {
    const arrays = new BinaryArrays();
    const big = Array.from({ length: 3 }, (_, index) => new Uint8Array(5000).fill(index + 1));
    const first = arrays.texts(['a', 'é', '😀']);
    const second = arrays.byteas(big);
    const third = arrays.texts(['z']);
    const { rows } = await pool.query({ text: 'SELECT $1::text[] AS a, $2::bytea[] AS b, $3::text[] AS c', values: [first, second, third] });
    expect(rows[0]).toEqual({ a: ['a', 'é', '😀'], b: big.map((value) => Buffer.from(value)), c: ['z'] });
  });
});
