import { setTimeout as sleep } from 'node:timers/promises';
import { copyDatabase, removeCopy } from './level-stream-files.js';
import { openLevelStream } from './level-stream.js';
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
export async function readLockedStream<T>(directory: string, stream: string, use: (copy: LevelStream) => Promise<T>): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(Math.min(5 * attempt, 50));
    let copy: string;
    try {
      copy = await copyDatabase(directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      lastError = error;
      continue;
    }
    try {
      const opened = await openLevelStream({ directory: copy, stream, create: false, copy: true });
      if (typeof opened === 'string') {
        lastError = new Error(`the copy of ${stream} did not open: ${opened}`);
        continue;
      }
      try {
        return await use(opened);
      } finally {
        await opened.close();
      }
    } catch (error) {
      if (error instanceof CodecMismatchError) throw error;
      lastError = error;
    } finally {
      await removeCopy(copy);
    }
  }
  throw lastError;
}
