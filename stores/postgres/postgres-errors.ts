import { ConcurrencyConflictError, StoreError } from '../store-errors.js';
import { CONFLICT_SQLSTATE, FENCED_SQLSTATE } from './postgres-migrations.js';

/** The lease of a stream is held by another owner or epoch (or, for an unfenced append, by anyone): nothing was written. */
export class FencedError extends StoreError {
  readonly stream: string;
  constructor(stream: string, detail: string, options?: { cause?: unknown }) {
    super('STORE_FENCED', `append to ${stream} refused: ${detail}`, options);
    this.name = 'FencedError';
    this.stream = stream;
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);

/**
 * True for errors that mean the server could not be reached or went away (refused, reset, shut down, restarting,
 * too many connections): the operation's outcome is unknown or nothing happened, and trying again later may work.
 */
export const isConnectionError = (error: unknown): boolean => {
  const coded = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof coded?.code === 'string' ? coded.code : '';
  if (CONNECTION_CODES.has(code)) return true;
  // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  const message = typeof coded?.message === 'string' ? coded.message : '';
  return /Connection terminated|connection ended|Client has encountered a connection error|timeout exceeded when trying to connect|the database system is (starting up|shutting down)/i.test(message);
};

/** Map a driver error of an operation on `stream` to the store's typed errors. */
export const storeErrorOf = (error: unknown, stream: string, expectedSeq?: number): unknown => {
  if (error instanceof StoreError) return error;
  const coded = error as { code?: unknown; message?: unknown; detail?: unknown };
  if (coded?.code === FENCED_SQLSTATE) return new FencedError(stream, `${String(coded.message)} (${String(coded.detail ?? '')})`, { cause: error });
  if (coded?.code === CONFLICT_SQLSTATE) return new ConcurrencyConflictError(stream, expectedSeq ?? 0, Number(coded.message));
  if (isConnectionError(error)) return new StoreError('STORE_UNAVAILABLE', `PostgreSQL is unavailable: ${String(coded?.message ?? error)}`, { cause: error });
  return new StoreError('STORE_BACKEND', `PostgreSQL error ${String(coded?.code ?? '')}: ${String(coded?.message ?? error)}`, { cause: error });
};
