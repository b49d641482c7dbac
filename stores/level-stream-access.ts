/*
 * How the LevelDB store opens a stream: in place through its pool, or — when another process holds the stream, the
 * store is read-only, or the stream was cut short below its last clean close — through a throwaway copy that LevelDB
 * recovers instead of the original; and what a damaged stream directory reports. Split from level-event-store.ts
 * (issue 31).
 */
import type { LevelCopyCache } from './level-locked-read.js';
import { readLockedStream } from './level-locked-read.js';
import { databaseExists, holdsData, streamDirectory } from './level-stream-files.js';
import type { LevelStreamPool, PooledStream } from './level-stream-pool.js';
import type { LevelStream } from './level-stream.js';
import { CorruptRecordError, StreamLockedError } from './store-errors.js';

export interface LevelStreamAccessOptions {
  root: string;
  pool: LevelStreamPool;
  readOnly: boolean;
  /** Read-only mode: the throwaway copies reads go through, one per stream, kept until the store closes. */
  copies: LevelCopyCache;
}

/** Opens a store's streams for reading, in place or through a copy. */
export class LevelStreamAccess {
  readonly #root: string;
  readonly #pool: LevelStreamPool;
  readonly #readOnly: boolean;
  readonly #copies: LevelCopyCache;

  constructor(options: LevelStreamAccessOptions) {
    this.#root = options.root;
    this.#pool = options.pool;
    this.#readOnly = options.readOnly;
    this.#copies = options.copies;
  }

  /** Runs a read on the stream's database, on a temporary copy when another process holds it, or returns `missing`. */
  async withReadable<T, M>(stream: string, use: (opened: LevelStream) => Promise<T>, missing: M): Promise<T | M> {
    if (this.#readOnly) {
      const directory = streamDirectory(this.#root, stream);
      if (await databaseExists(directory)) return this.#copies.with(directory, stream, use);
      // As an open in place would say: a stream whose CURRENT was lost must not look like no stream.
      if (await holdsData(directory)) throw new CorruptRecordError(stream, undefined, 'the LevelDB CURRENT file is missing but the stream holds data');
      return missing;
    }
    return this.#pool.with(stream, false, async (opened) => {
      if (opened === 'missing') return missing;
      if (opened === 'locked') return readLockedStream(streamDirectory(this.#root, stream), stream, use);
      return use(opened);
    });
  }

  /** Runs a read on a throwaway copy of a stream cut below its last clean close, which opens anyway (`StreamCutShortError` in place). */
  withCutShort<T>(stream: string, use: (opened: LevelStream) => Promise<T>): Promise<T> {
    return readLockedStream(streamDirectory(this.#root, stream), stream, use, { tolerateCutShort: true });
  }
}

/** The stream a write may go to: undefined when there is none yet; `STORE_LOCKED` when another process holds it. */
export function writableStream(stream: string, opened: PooledStream): LevelStream | undefined {
  if (opened === 'locked') throw new StreamLockedError(stream);
  return opened === 'missing' ? undefined : opened;
}
