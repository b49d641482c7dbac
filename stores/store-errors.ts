import type { ChainReport } from './chain-report.js';
import { ReinError } from '../models/rein-error.js';

/** Stable codes for every error the store layer raises; tests assert these, never messages. */
export type StoreErrorCode =
  | 'STORE_CONFLICT'
  | 'STORE_CORRUPT_RECORD'
  | 'STORE_STREAM_NOT_FOUND'
  | 'STORE_STREAM_EXISTS'
  | 'STORE_INVALID_ARGUMENT'
  | 'STORE_CODEC_MISMATCH'
  | 'STORE_LOCKED'
  | 'STORE_CLOSED'
  | 'STORE_READ_ONLY'
  | 'STORE_IO'
  | 'BLOB_NOT_FOUND'
  | 'BLOB_CORRUPT'
  | 'STORE_VERSION_UNSUPPORTED'
  | 'STORE_FENCED'
  | 'STORE_UNAVAILABLE'
  | 'STORE_BACKEND'
  | 'CHAIN_BROKEN'
  | 'CHAIN_UNAUTHENTICATED'
  | 'CHAIN_KEY_INVALID'
  | 'CHAIN_KEY_UNAVAILABLE';

/** Base class of store errors: a stable `code` plus the underlying `cause` when there is one. */
export class StoreError extends ReinError<StoreErrorCode> {
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'StoreError';
  }
}

/** The stream head moved since the writer read it: nothing from this append was written. */
export class ConcurrencyConflictError extends StoreError {
  readonly stream: string;
  readonly expectedSeq: number;
  readonly actualSeq: number;
  constructor(stream: string, expectedSeq: number, actualSeq: number) {
    super('STORE_CONFLICT', `append to ${stream} expected head ${expectedSeq} but the head is ${actualSeq}`);
    this.name = 'ConcurrencyConflictError';
    this.stream = stream;
    this.expectedSeq = expectedSeq;
    this.actualSeq = actualSeq;
  }
}

/**
 * A stored value failed its checksum or could not be decoded, or records the store had acknowledged are missing
 * (a seq gap, or LevelDB dropped damaged log data on recovery): damaged data is never returned as data.
 */
export class CorruptRecordError extends StoreError {
  readonly stream: string;
  readonly seq: number | undefined;
  constructor(stream: string, seq: number | undefined, detail: string, options?: { cause?: unknown }) {
    super('STORE_CORRUPT_RECORD', `corrupt record in ${stream}${seq === undefined ? '' : ` at seq ${seq}`}: ${detail}`, options);
    this.name = 'CorruptRecordError';
    this.stream = stream;
    this.seq = seq;
  }
}

/**
 * A stream's chain does not vouch for its records (docs/architecture.md: *The chain*): `CHAIN_BROKEN` when the records no longer
 * follow one another as the chain recorded (one was changed, inserted, deleted or moved, the stream was cut short, or
 * a record cannot be read), `CHAIN_UNAUTHENTICATED` when the chain is intact but this machine's key did not write it
 * (copied from another machine, rewritten without the key, or written before the chain). `seq` is the first record
 * concerned.
 */
export class ChainError extends StoreError {
  readonly stream: string;
  readonly seq: number | undefined;
  /** The check's whole report, when a check made this error (see `EventStore.verifyChain`). */
  readonly report: ChainReport | undefined;
  constructor(code: 'CHAIN_BROKEN' | 'CHAIN_UNAUTHENTICATED', stream: string, seq: number | undefined, problem: string, options?: { cause?: unknown; report?: ChainReport }) {
    super(code, `${stream}: ${problem}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChainError';
    this.stream = stream;
    this.seq = seq;
    this.report = options?.report;
  }
}

/** Another process (or another store instance) holds the stream's database: it can be read but not written. */
export class StreamLockedError extends StoreError {
  readonly stream: string;
  constructor(stream: string, options?: { cause?: unknown }) {
    super('STORE_LOCKED', `stream ${stream} is locked by another process`, options);
    this.name = 'StreamLockedError';
    this.stream = stream;
  }
}

/** The stream was written with a different codec (id or pinned options) than this build uses. */
export class CodecMismatchError extends StoreError {
  readonly stream: string;
  readonly storedCodec: string;
  readonly currentCodec: string;
  constructor(stream: string, storedCodec: string, currentCodec: string) {
    super('STORE_CODEC_MISMATCH', `stream ${stream} was written with codec ${storedCodec}, this build uses ${currentCodec}`);
    this.name = 'CodecMismatchError';
    this.stream = stream;
    this.storedCodec = storedCodec;
    this.currentCodec = currentCodec;
  }
}

/** A blob is unknown (`BLOB_NOT_FOUND`), or its bytes no longer match its content hash or cannot be read back from a damaged store (`BLOB_CORRUPT`). */
export class BlobError extends StoreError {
  readonly ref: string;
  constructor(code: 'BLOB_NOT_FOUND' | 'BLOB_CORRUPT', ref: string, options?: { cause?: unknown; detail?: string }) {
    super(code, code === 'BLOB_NOT_FOUND' ? `no blob ${ref}` : options?.detail ? `blob ${ref} is damaged: ${options.detail}` : `blob ${ref} does not match its content hash`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BlobError';
    this.ref = ref;
  }
}

/**
 * The rein error for an error classic-level raised (`LEVEL_*` codes, anywhere along its causes): corruption is
 * `STORE_CORRUPT_RECORD`, a held lock `STORE_LOCKED`, a read-only database `STORE_READ_ONLY`, and every other LEVEL
 * failure (I/O errors, a database that would not open) `STORE_IO`. Anything else is returned unchanged.
 */
export const storeErrorOfLevel = (stream: string, error: unknown): unknown => {
  if (error instanceof StoreError) return error;
  const codes: string[] = [];
  for (let current = error; typeof current === 'object' && current !== null; current = (current as Error).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  const level = codes.filter((code) => code.startsWith('LEVEL_'));
  if (level.length === 0) return error;
  const detail = `${level.join(' ← ')}: ${(error as Error).message}`;
  if (level.includes('LEVEL_CORRUPTION')) return new CorruptRecordError(stream, undefined, `LevelDB reports corruption (${detail})`, { cause: error });
  if (level.includes('LEVEL_LOCKED')) return new StreamLockedError(stream, { cause: error });
  if (level.includes('LEVEL_READONLY')) return new StoreError('STORE_READ_ONLY', `stream ${stream} is read-only (${detail})`, { cause: error });
  return new StoreError('STORE_IO', `stream ${stream} could not be used (${detail})`, { cause: error });
};
