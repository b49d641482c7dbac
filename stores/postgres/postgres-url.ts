import { StoreError } from '../store-errors.js';

/** Where a PostgreSQL store lives: the connection string pg receives, the schema its tables are in, and a printable form. */
export interface PostgresLocation {
  /** The URL without rein's own `schema` parameter (the password, if any, is kept: pg needs it). */
  connectionString: string;
  /** The schema holding rein's tables (default `rein`): lower-case letters, digits and `_`, at most 40 characters. */
  schema: string;
  /** The URL with its password replaced by `***`: the only form rein prints or records. */
  display: string;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,39}$/;

/** True for `postgres://…` and `postgresql://…` store locations. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location);

/**
 * The location with any password replaced by `***`: every `//user:password@` in it (a URL the parser reads, a malformed
 * one, or one of another scheme), so no error message or record ever shows it.
 */
export const redactPostgresUrl = (location: string): string => String(location).replace(/\/\/([^/@:]*):[^@]*@/g, '//$1:***@');

/**
 * Parse a store URL `postgres://user[:password]@host[:port]/database[?schema=name&…]`. `schema` selects the schema
 * rein's tables live in (default `rein`), so several stores can share one database; every other parameter goes to the
 * driver. A malformed URL or schema name is `STORE_INVALID_ARGUMENT` (the message never shows the password).
 */
export const parsePostgresUrl = (location: string): PostgresLocation => {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new StoreError('STORE_INVALID_ARGUMENT', `not a PostgreSQL URL: ${redactPostgresUrl(location)}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new StoreError('STORE_INVALID_ARGUMENT', `not a PostgreSQL URL (expected postgres://…): ${redactPostgresUrl(location)}`);
  }
  const schema = url.searchParams.get('schema') ?? 'rein';
  if (!SCHEMA_PATTERN.test(schema)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `schema ${JSON.stringify(schema)} must be 1-40 characters of [a-z0-9_], not starting with a digit`);
  }
  url.searchParams.delete('schema');
  const connectionString = url.toString();
  return { connectionString, schema, display: redactPostgresUrl(location) };
};
