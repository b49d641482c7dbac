import fc from 'fast-check';
import { expect, it } from 'vitest';
import { openPostgresEventStore, parsePostgresUrl } from '../../stores/index.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { check, operation, runs } from './store-model.js';

describePostgres('PostgreSQL EventStore against an array model', () => {
  it('matches the model, readAll included, each run on a fresh schema', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 40 }), async (operations) => {
        const store = await openPostgresEventStore(freshSchemaUrl(), { poolSize: 4 });
        try {
          await check(store, operations);
        } finally {
          await store.close();
        }
      }),
      { numRuns: Math.min(runs, 25) },
    );
  }, 600_000);
});

it('parses any store URL into a typed error or a location, never showing a password', () => {
  const password = fc.string({ minLength: 1, maxLength: 12 }).filter((text) => /^[A-Za-z0-9]+$/.test(text));
  const schema = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 45 }));
  fc.assert(
    fc.property(password, schema, fc.string({ maxLength: 30 }), (secret, schemaName, junk) => {
      const candidates = [`postgres://user:${secret}@host:5432/db${schemaName === undefined ? '' : `?schema=${encodeURIComponent(schemaName)}`}`, `postgres://user:${secret}@${junk}`, `${junk}://user:${secret}@host/db`];
      for (const candidate of candidates) {
        try {
          const parsed = parsePostgresUrl(candidate);
          if (secret.length > 2) expect(parsed.display).not.toContain(`:${secret}@`);
          expect(parsed.schema).toMatch(/^[a-z_][a-z0-9_]{0,39}$/);
        } catch (error) {
          expect((error as { code?: string }).code).toBe('STORE_INVALID_ARGUMENT');
          expect((error as Error).message).not.toContain(`:${secret}@`);
        }
      }
    }),
    { numRuns: runs * 4 },
  );
});
