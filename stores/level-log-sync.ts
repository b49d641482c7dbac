/*
 * Group commit of a LevelDB stream database without writing anything: fdatasync its write-ahead log files, whose
 * descriptors stay open between commits. Split from level-stream.ts (issue 31).
 */
import { readdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './store-errors.js';

export interface WriteAheadLogsOptions {
  /** The stream database's directory. */
  directory: string;
  stream: string;
  /** A synced LevelDB write, for a database with no log file to sync (it makes one). */
  syncedWrite: () => Promise<void>;
}

/** The write-ahead logs of one open stream database, synced on demand. */
export class WriteAheadLogs {
  readonly directory: string;
  readonly stream: string;
  readonly #syncedWrite: () => Promise<void>;
  /** Open descriptors of the database's write-ahead logs, by file name; closed with the database (`close`). */
  readonly #handles = new Map<string, FileHandle>();

  constructor(options: WriteAheadLogsOptions) {
    this.directory = options.directory;
    this.stream = options.stream;
    this.#syncedWrite = options.syncedWrite;
  }

  /**
   * fdatasyncs every write-ahead log file of the database, which makes every batch LevelDB wrote before the call
   * durable without writing anything. LevelDB (1.20, as classic-level builds it) hands each batch's log record to the OS
   * (`fflush`) before the write resolves, and a synced write of its own only adds an `fdatasync` of the current log —
   * this one. It was a tiny synced put (`SYNC_KEY`): one more LevelDB write per commit, and while its fsync ran it held
   * LevelDB's writer queue, so the next step's batch waited for the disk. A log LevelDB switched away from since the
   * batch was written is synced as well (LevelDB itself never syncs it; it deletes it once its memtable is a synced
   * table, so a log gone before it is opened needs nothing). Descriptors stay open between commits.
   */
  async sync(): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(this.directory).filter((name) => name.endsWith('.log'));
    } catch (error) {
      throw new StoreError('STORE_IO', `stream ${this.stream} could not list its write-ahead logs`, { cause: error });
    }
    for (const [name, handle] of this.#handles) {
      if (names.includes(name)) continue;
      this.#handles.delete(name);
      await handle.close().catch(() => undefined);
    }
    // No log at all would leave nothing synced: fall back to a synced LevelDB write, which makes one.
    if (names.length === 0) {
      await this.#syncedWrite();
      return;
    }
    // One log, its descriptor open (nearly every commit): synced without a closure and a `Promise.all` around it.
    const only = names.length === 1 ? this.#handles.get(names[0]!) : undefined;
    if (only !== undefined) {
      try {
        await only.datasync();
      } catch (error) {
        throw new StoreError('STORE_IO', `stream ${this.stream} could not sync its write-ahead log ${names[0]!}`, { cause: error });
      }
      return;
    }
    await Promise.all(
      names.map(async (name) => {
        try {
          let handle = this.#handles.get(name);
          if (handle === undefined) {
            try {
              handle = await open(join(this.directory, name), 'r');
            } catch (error) {
              // Deleted since it was listed: LevelDB synced the table holding its batches first.
              if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
              throw error;
            }
            const raced = this.#handles.get(name);
            if (raced !== undefined) {
              await handle.close();
              handle = raced;
            } else this.#handles.set(name, handle);
          }
          await handle.datasync();
        } catch (error) {
          throw new StoreError('STORE_IO', `stream ${this.stream} could not sync its write-ahead log ${name}`, { cause: error });
        }
      }),
    );
  }

  /** Closes the descriptors (the database is closing). */
  async close(): Promise<void> {
    for (const handle of this.#handles.values()) await handle.close().catch(() => undefined);
    this.#handles.clear();
  }
}
