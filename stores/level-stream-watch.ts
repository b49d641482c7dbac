import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** LevelDB table files: immutable once written, so their names alone say whether they changed. */
const TABLE = /\.(ldb|sst)$/;
/** Files whose change says nothing about the records: the lock and LevelDB's info logs. */
const IGNORED = new Set(['LOCK', 'LOG', 'LOG.old']);

/**
 * A cheap fingerprint of a stream's LevelDB directory that changes whenever a process writes it: the file names, and
 * the size and change time of every file that is not an immutable table (the write-ahead log grows on every append;
 * a flush or compaction swaps the manifest, the log and the tables). `missing` when the directory does not exist.
 */
export const directorySignature = async (directory: string): Promise<string> => {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 'missing';
  }
  const parts: string[] = [];
  for (const name of names.sort()) {
    if (IGNORED.has(name)) continue;
    if (TABLE.test(name)) {
      parts.push(name);
      continue;
    }
    const info = await stat(join(directory, name)).catch(() => undefined);
    if (info) parts.push(`${name}:${info.size}:${info.mtimeMs}`);
  }
  return parts.join('|');
};

/**
 * Calls `onChange` whenever the files of a stream's database directory change: at once on a file-system
 * notification (inotify where there is one), and in any case within `intervalMs` (a poll of `directorySignature`, which
 * also covers a directory created later and file systems that do not notify). The first call comes right after the
 * first fingerprint is taken, so a tail that read its history before that catches up on what was appended meanwhile;
 * each change is reported twice, at once and `intervalMs` later, for a read that raced the write.
 * Returns the function that stops watching. For appends made by other processes (or other store objects): this
 * process's own appends notify their tails directly, and while `idle` says so (this process holds the stream, so no
 * other can write it) the directory is not even looked at.
 */
export const watchStreamDirectory = (directory: string, onChange: () => void, options: { intervalMs: number; idle?: () => boolean }): (() => void) => {
  let last: string | undefined;
  let watcher: FSWatcher | undefined;
  let checking = false;
  let again = false;
  let stopped = false;
  let settle: ReturnType<typeof setTimeout> | undefined;

  const ensureWatcher = (): void => {
    if (watcher !== undefined || stopped || last === 'missing') return;
    try {
      watcher = watch(directory, { persistent: false }, () => void check());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  };
  const check = async (): Promise<void> => {
    // Nobody else can be writing (this process holds the stream): look again once that is no longer so.
    if (stopped || options.idle?.()) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        const signature = await directorySignature(directory);
        if (stopped) return;
        const changed = signature !== last;
        last = signature;
        if (changed) {
          onChange();
          // Once more a moment later: a read that raced the write (a copy taken while the writer's files were
          // changing) may have missed it, and the files may not change again for a long time.
          clearTimeout(settle);
          settle = setTimeout(() => !stopped && onChange(), options.intervalMs);
          settle.unref();
        }
        ensureWatcher();
      } while (again && !stopped);
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  void check();
  return () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(settle);
    watcher?.close();
    watcher = undefined;
  };
};
