import { setTimeout as sleep } from 'node:timers/promises';
import { copyDatabase, removeCopy } from './level-stream-files.js';
import { openLevelStream } from './level-stream.js';
import { directorySignature } from './level-stream-watch.js';
import type { LevelStream } from './level-stream.js';
import { CodecMismatchError } from './store-errors.js';

/** A busy owner can compact several times in a row: up to 12 tries, about 0.4 s of backoff in all. */
const ATTEMPTS = 12;

/**
 * Reads a stream whose database another process holds: copies the directory (all files but `LOCK` and the info
 * logs) to a temp directory, opens the copy, runs `use` on it, and deletes the copy. The copy sees every write the
 * owner handed to the OS. A file vanishing mid-copy (the owner compacting) or a copy that does not open cleanly is
 * retried a few times; after that the last error is raised (a `CorruptRecordError` when the data is damaged).
 * `use` must only read: it may run more than once.
 */
export async function readLockedStream<T>(directory: string, stream: string, use: (copy: LevelStream) => Promise<T>, options: { tolerateCutShort?: boolean } = {}): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(Math.min(5 * attempt, 50));
    const tried = await tryOpenCopy(directory, stream, options.tolerateCutShort === true);
    if ('error' in tried) {
      lastError = tried.error;
      continue;
    }
    try {
      try {
        return await use(tried.opened);
      } finally {
        await tried.opened.close();
      }
    } catch (error) {
      if (error instanceof CodecMismatchError) throw error;
      lastError = error;
    } finally {
      await removeCopy(tried.copy);
    }
  }
  throw lastError;
}

/**
 * One try at copying `directory` and opening the copy: the open copy, or why this try failed (a file vanished mid-copy,
 * the copy did not open cleanly; the copy is then deleted). A codec mismatch is raised: trying again cannot help.
 */
const tryOpenCopy = async (directory: string, stream: string, tolerateCutShort: boolean): Promise<{ copy: string; opened: LevelStream } | { error: unknown }> => {
  let copy: string;
  try {
    copy = await copyDatabase(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return { error };
  }
  try {
    const opened = await openLevelStream({ directory: copy, stream, create: false, copy: true, ...(tolerateCutShort ? { tolerateCutShort } : {}) });
    if (typeof opened !== 'string') return { copy, opened };
    await removeCopy(copy);
    return { error: new Error(`the copy of ${stream} did not open: ${opened}`) };
  } catch (error) {
    await removeCopy(copy);
    if (error instanceof CodecMismatchError) throw error;
    return { error };
  }
};

/** One open throwaway copy of a stream's database (see `LevelCopyCache`). */
interface CachedCopy {
  opening: Promise<{ copy: string; opened: LevelStream }>;
  leases: number;
  lastUsed: number;
  /** Dropped from the cache (a read on it failed, or evicted): disposed once its last use ends. */
  dropped: boolean;
  /** With `fresh`: the stream directory's fingerprint taken before the copy was made. */
  signature?: string;
}

/**
 * The throwaway copies a read-only store reads through, one per stream, each made on the stream's first read and kept
 * for the next ones (listing a session reads a stream three times), at most `limit` at a time (the least recently
 * used idle one goes first); all deleted on `close`. A read-only store so reads every stream as it was at its first
 * read, like the one consistent copy it is. A read that fails on a cached copy drops it and is retried on fresh
 * copies (`readLockedStream`).
 */
export class LevelCopyCache {
  readonly #entries = new Map<string, CachedCopy>();
  readonly #limit: number;
  readonly #fresh: boolean;
  #clock = 0;

  /**
   * `fresh`: before each read, the stream directory's fingerprint (`directorySignature`) is compared with the one taken
   * when the copy was made, and a copy of a stream that was written since is replaced — for a long-lived reader
   * (`rein serve --read-only`) that must see what other processes append. Each read then costs a directory listing.
   */
  constructor(limit: number, options: { fresh?: boolean } = {}) {
    this.#limit = limit;
    this.#fresh = options.fresh ?? false;
  }

  /** Forget the copy of `stream` (disposed once its reads end): the next read makes a new one. */
  invalidate(stream: string): void {
    const entry = this.#entries.get(stream);
    if (entry === undefined) return;
    this.#drop(stream, entry);
    if (entry.leases === 0) void dispose(entry);
  }

  async with<T>(directory: string, stream: string, use: (copy: LevelStream) => Promise<T>): Promise<T> {
    const signature = this.#fresh ? await directorySignature(directory) : undefined;
    let entry = this.#entries.get(stream);
    if (entry !== undefined && signature !== undefined && entry.signature !== signature) {
      this.invalidate(stream);
      entry = undefined;
    }
    if (entry === undefined) {
      entry = { opening: openCopy(directory, stream), leases: 0, lastUsed: 0, dropped: false, ...(signature === undefined ? {} : { signature }) };
      this.#entries.set(stream, entry);
    }
    entry.leases += 1;
    try {
      let opened: LevelStream;
      try {
        opened = (await entry.opening).opened;
      } catch {
        this.#drop(stream, entry);
        return await readLockedStream(directory, stream, use);
      }
      try {
        return await use(opened);
      } catch (error) {
        if (error instanceof CodecMismatchError) throw error;
        this.#drop(stream, entry);
        return await readLockedStream(directory, stream, use);
      }
    } finally {
      entry.leases -= 1;
      entry.lastUsed = ++this.#clock;
      if (entry.dropped && entry.leases === 0) await dispose(entry);
      else this.#evictIdle();
    }
  }

  /** Close and delete every copy (waiting for the reads in flight is the caller's part). */
  async close(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((entry) => dispose(entry)));
  }

  #drop(stream: string, entry: CachedCopy): void {
    entry.dropped = true;
    if (this.#entries.get(stream) === entry) this.#entries.delete(stream);
  }

  #evictIdle(): void {
    if (this.#entries.size <= this.#limit) return;
    const idle = [...this.#entries].filter(([, entry]) => entry.leases === 0).sort(([, left], [, right]) => left.lastUsed - right.lastUsed);
    for (const [stream, entry] of idle.slice(0, this.#entries.size - this.#limit)) {
      this.#drop(stream, entry);
      void dispose(entry);
    }
  }
}

/** Copy `directory` and open the copy, retried as `readLockedStream` retries. */
const openCopy = async (directory: string, stream: string): Promise<{ copy: string; opened: LevelStream }> => {
  let lastError: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(Math.min(5 * attempt, 50));
    const tried = await tryOpenCopy(directory, stream, false);
    if (!('error' in tried)) return tried;
    lastError = tried.error;
  }
  throw lastError;
};

const dispose = async (entry: CachedCopy): Promise<void> => {
  const copied = await entry.opening.catch(() => undefined);
  if (copied === undefined) return;
  await copied.opened.close().catch(() => undefined);
  await removeCopy(copied.copy);
};
