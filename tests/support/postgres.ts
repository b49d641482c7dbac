import { randomBytes } from 'node:crypto';
import { describe, inject, it } from 'vitest';

/** The shared test cluster's URL ('' when PostgreSQL is not installed). */
export const postgresUrl = (): string => inject('postgresUrl');

/**
 * `describe` for tests that need a real PostgreSQL server. Without one they are skipped on a developer's machine and
 * fail (never skip) when `CI` is set.
 */
export const describePostgres = (name: string, body: () => void): void => {
  if (postgresUrl() !== '') return void describe(name, body);
  if (process.env.CI) {
    return void describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(inject('postgresMissing'));
      });
    });
  }
  describe.skip(name, body);
};

/** `url` with a fresh schema of its own (`?schema=t_<random>`), so each store under test starts empty. */
export const freshSchemaUrl = (url = postgresUrl(), prefix = 't'): string => {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', `${prefix}_${randomBytes(6).toString('hex')}`);
  return parsed.toString();
};
