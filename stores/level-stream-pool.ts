import { streamDirectory } from './level-stream-files.js';
import { LevelStream, openLevelStream } from './level-stream.js';
import { StoreError } from './store-errors.js';

/** What a pooled stream resolves to: the open database, or why there is none. */
export type PooledStream = LevelStream | 'missing' | 'locked';

interface PoolEntry {
  opening: Promise<PooledStream>;
  handle?: LevelStream;
  leases: number;
  lastUsed: number;
  /** Close as soon as the last lease ends (`release`); resolved once it is closed. */
  release?: { closed: Promise<void>; done: () => void };
}

/**
 * The stream databases this store has open, opened lazily and shared by every caller. Each database holds the
 * LevelDB lock of its directory, so the pool guarantees one open per stream per process. When more than
 * `maxOpenStreams` are open, the least recently used idle ones are closed (flushed and watermarked first).
 */
export class LevelStreamPool {
  readonly #root: string;
  readonly #maxOpenStreams: number;
  readonly #entries = new Map<string, PoolEntry>();
  readonly #closing = new Map<string, Promise<void>>();
  /** Streams this process holds (`hold`), with how many holds: never evicted, so their lock stays ours. */
  readonly #held = new Map<string, number>();
  #inFlight = 0;
  #drained: (() => void) | undefined;
  #clock = 0;
  #evictionError: unknown;
  #closed = false;

  readonly #onSync: ((stream: string, durableHead: number) => void) | undefined;

  /** `onSync` is told the new durable head of a stream after every fsync of its database. */
  constructor(options: { root: string; maxOpenStreams: number; onSync?: (stream: string, durableHead: number) => void }) {
    this.#root = options.root;
    this.#maxOpenStreams = options.maxOpenStreams;
    this.#onSync = options.onSync;
  }

  /**
   * Runs `use` with the stream's open database (or `'missing'` / `'locked'`), keeping it from being evicted
   * meanwhile. With `create`, a missing stream database is created first.
   */
  async with<T>(stream: string, create: boolean, use: (stream: PooledStream) => Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreError('STORE_CLOSED', 'the store is closed');
    this.#inFlight += 1;
    try {
      const open = this.#entries.get(stream);
      const entry = open?.handle !== undefined ? this.#leaseOpen(open) : await this.#lease(stream, create);
      if (typeof entry === 'string') return await use(entry);
      try {
        return await use(entry.handle!);
      } finally {
        entry.leases -= 1;
        entry.lastUsed = ++this.#clock;
        if (entry.release && entry.leases === 0) void this.#closeEntry(stream, entry).then(entry.release.done);
        this.#evictIdle();
      }
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#drained?.();
    }
  }

  /** Whether `stream`'s database is open in place in this process now (so its LevelDB lock is this process's). */
  isOpen(stream: string): boolean {
    return this.#entries.get(stream)?.handle !== undefined;
  }

  /** Group commit: one fsync of the logs of each open database with unsynced writes, each leased so it cannot be evicted. */
  async syncAll(): Promise<void> {
    const dirty = [...this.#entries.values()].filter((entry) => entry.handle?.unsynced === true);
    await Promise.all(
      dirty.map(async (entry) => {
        entry.leases += 1;
        try {
          await entry.handle!.sync();
        } finally {
          entry.leases -= 1;
        }
      }),
    );
  }

  /**
   * Refuses new operations (`STORE_CLOSED`), waits for those in progress, then closes every database (each syncs and
   * writes its watermark first).
   */
  async closeAll(): Promise<void> {
    this.#closed = true;
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    const entries = [...this.#entries.values()];
    const handles = entries.map((entry) => entry.opening);
    this.#entries.clear();
    const results = await Promise.allSettled([
      ...handles.map(async (opening) => {
        const handle = await opening.catch(() => undefined);
        if (handle instanceof LevelStream) await handle.close();
      }),
      ...this.#closing.values(),
    ]);
    for (const entry of entries) entry.release?.done();
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (this.#evictionError !== undefined) throw this.#evictionError;
  }

  /**
   * Closes the stream's database now if no operation holds it, otherwise as soon as the last one ends; resolves
   * once it is closed. A later `with` reopens it.
   */
  async release(stream: string): Promise<void> {
    this.#held.delete(stream);
    for (;;) {
      const entry = this.#entries.get(stream);
      if (entry === undefined) {
        await this.#closing.get(stream);
        return;
      }
      if (entry.handle === undefined) {
        // Still opening: once it settles it is either open (look again) or gone (missing, locked).
        await entry.opening.catch(() => undefined);
        continue;
      }
      if (entry.leases === 0) return this.#closeEntry(stream, entry);
      if (entry.release === undefined) {
        let done!: () => void;
        const closed = new Promise<void>((resolve) => (done = resolve));
        entry.release = { closed, done };
      }
      await entry.release.closed;
      return;
    }
  }

  #closeEntry(stream: string, entry: PoolEntry): Promise<void> {
    if (this.#entries.get(stream) !== entry || entry.handle === undefined) return this.#closing.get(stream) ?? Promise.resolve();
    this.#entries.delete(stream);
    const closing = entry.handle.close().catch((error: unknown) => {
      this.#evictionError ??= error;
    });
    this.#closing.set(stream, closing);
    void closing.finally(() => this.#closing.delete(stream));
    return closing;
  }

  /** Leases an entry whose database is already open (the common case): no await. */
  #leaseOpen(entry: PoolEntry): PoolEntry {
    entry.leases += 1;
    return entry;
  }

  async #lease(stream: string, create: boolean): Promise<PoolEntry | 'missing' | 'locked'> {
    for (;;) {
      const closing = this.#closing.get(stream);
      if (closing !== undefined) {
        await closing.catch(() => undefined);
        continue;
      }
      const entry = this.#entries.get(stream) ?? this.#open(stream, create);
      entry.leases += 1;
      let result: PooledStream;
      try {
        result = await entry.opening;
      } catch (error) {
        entry.leases -= 1;
        throw error;
      }
      if (typeof result !== 'string') return entry;
      entry.leases -= 1;
      if (result === 'missing' && create) continue;
      return result;
    }
  }

  #open(stream: string, create: boolean): PoolEntry {
    const directory = streamDirectory(this.#root, stream);
    const entry: PoolEntry = { opening: openLevelStream({ directory, stream, create, copy: false }), leases: 0, lastUsed: 0 };
    this.#entries.set(stream, entry);
    const forget = (): void => {
      if (this.#entries.get(stream) === entry) this.#entries.delete(stream);
    };
    entry.opening.then((result) => {
      if (typeof result === 'string') forget();
      else {
        entry.handle = result;
        const onSync = this.#onSync;
        if (onSync) result.onSync = (durableHead) => onSync(stream, durableHead);
      }
    }, forget);
    return entry;
  }

  /** Keep `stream` open (never evicted) until as many `unpin`s: it is open in this process now (see `EventStore.hold`). */
  pin(stream: string): true {
    this.#held.set(stream, (this.#held.get(stream) ?? 0) + 1);
    return true;
  }

  unpin(stream: string): void {
    const count = (this.#held.get(stream) ?? 0) - 1;
    if (count > 0) this.#held.set(stream, count);
    else this.#held.delete(stream);
  }

  #evictIdle(): void {
    if (this.#entries.size <= this.#maxOpenStreams) return;
    const idle = [...this.#entries]
      .filter(([stream, entry]) => entry.leases === 0 && entry.handle !== undefined && !this.#held.has(stream))
      .sort(([, left], [, right]) => left.lastUsed - right.lastUsed);
    for (const [stream, entry] of idle.slice(0, this.#entries.size - this.#maxOpenStreams)) void this.#closeEntry(stream, entry);
  }
}
