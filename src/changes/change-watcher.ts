import { mkdirSync, mkdtempSync, readFileSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The kernel's inotify queue length (events beyond it are dropped); read once. */
const queueLimit = ((): number => {
  try {
    const value = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isFinite(value) && value > 0 ? value : 16_384;
  } catch {
    return 16_384;
  }
})();

/** How long a drain waits for its own event before it gives up on the queue (a very busy machine). */
const barrierTimeoutMs = 5_000;

/**
 * The paths that may have changed since the last `drain`, found through inotify (one watch per directory, through
 * `fs.watch`): an event names an entry of a watched directory, so a change costs O(1) to note and the capture reads
 * only those paths. All watches of a process share libuv's one inotify descriptor, whose events arrive in the order
 * the kernel queued them; `drain` first makes a directory of its own in the temp directory and waits for that event,
 * so every event of a change made before the call has been seen. When the events since the last drain reach the
 * kernel's queue length (some may have been dropped), or a watch could not be added (the user's watch limit), the
 * watcher reports `lost` and the capture scans the whole tree instead.
 */
export class ChangeWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private dirty = new Set<string>();
  private events = 0;
  private lost = false;
  private readonly sentinelDirectory: string;
  private readonly sentinel: FSWatcher;
  private barrier = 0;
  private waiting: { name: string; resolve: () => void } | undefined;
  private closed = false;

  /** Linux only: elsewhere `fs.watch` does not promise one ordered queue. */
  static available(): boolean {
    return process.platform === 'linux';
  }

  constructor(private readonly root: string) {
    this.sentinelDirectory = mkdtempSync(join(tmpdir(), 'rein-capture-'));
    this.sentinel = watch(this.sentinelDirectory, { persistent: false }, (_event, name) => {
      if (this.waiting && name === this.waiting.name) {
        const { resolve } = this.waiting;
        this.waiting = undefined;
        resolve();
      }
    });
    this.sentinel.on('error', () => {
      this.lost = true;
    });
  }

  /** Watch directory `path` (workspace-relative; `''` is the root). False when the watch could not be added. */
  add(path: string): boolean {
    if (this.closed || this.watchers.has(path)) return true;
    try {
      const watcher = watch(path === '' ? this.root : join(this.root, path), { persistent: false }, (_event, name) => {
        this.events++;
        if (typeof name !== 'string' || name === '') this.lost = true;
        else this.dirty.add(path === '' ? name : `${path}/${name}`);
      });
      watcher.on('error', () => {
        // The directory went away (its parent's event says so) or the watch broke: the parent is looked at again.
        watcher.close();
        this.watchers.delete(path);
        this.dirty.add(path);
      });
      this.watchers.set(path, watcher);
      return true;
    } catch {
      this.lost = true;
      return false;
    }
  }

  /** Stop watching directory `path` and every watched directory under it. */
  remove(path: string): void {
    for (const [watched, watcher] of this.watchers) {
      if (watched === path || path === '' || watched.startsWith(`${path}/`)) {
        watcher.close();
        this.watchers.delete(watched);
      }
    }
  }

  /**
   * Every path noted since the last drain, once all events of changes made before this call have arrived; `lost`:
   * events may have been dropped (or a watch failed), so only a full scan is exact.
   */
  async drain(): Promise<{ paths: Set<string>; lost: boolean }> {
    if (!this.closed) {
      const name = String(++this.barrier);
      // The timer keeps the process alive while it waits (the watches do not), and bounds the wait: an event that
      // never comes means the queue cannot be trusted, so the pass scans.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arrived = new Promise<boolean>((resolve) => {
        this.waiting = { name, resolve: () => resolve(true) };
        timer = setTimeout(() => resolve(false), barrierTimeoutMs);
      });
      mkdirSync(join(this.sentinelDirectory, name));
      if (!(await arrived)) this.lost = true;
      clearTimeout(timer);
      this.waiting = undefined;
      rmSync(join(this.sentinelDirectory, name), { recursive: true, force: true });
    }
    const drained = { paths: this.dirty, lost: this.lost || this.events >= queueLimit };
    this.dirty = new Set();
    this.events = 0;
    this.lost = false;
    return drained;
  }

  /** Forget what was noted (the caller scans the whole tree instead); events still in flight are noted again. */
  reset(): void {
    this.dirty = new Set();
    this.events = 0;
    this.lost = false;
  }

  /** How many directories are watched. */
  get size(): number {
    return this.watchers.size;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.sentinel.close();
    this.waiting?.resolve();
    rmSync(this.sentinelDirectory, { recursive: true, force: true });
  }
}
