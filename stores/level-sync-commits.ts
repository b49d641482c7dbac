/*
 * Group commit for the LevelDB store's sync mode: appends written with `sync: false` wait (`commit`) for one fsync of
 * their stream that covers them, arranged `delayMs` after the first waiter so the appends written meanwhile share it.
 * Tracks, per stream, the durable head tails may read up to. Split from level-event-store.ts (issue 31).
 */

/** Sync mode: a stream's appends written with `sync: false` and not yet covered by an fsync. */
interface PendingCommit {
  durableHead: number;
  writtenHead: number;
  waiters: Array<{ seq: number; resolve: () => void; reject: (error: unknown) => void }>;
  /** Cancels the arranged group commit; undefined when none is arranged. */
  timer: (() => void) | undefined;
}

export interface LevelSyncCommitsOptions {
  /** How long a commit gathers further appends before its fsync, in ms (0: as soon as the event-loop turn ends). */
  delayMs: number;
  /**
   * One fsync of `stream` covering every append written before it starts (not queued behind the appends in flight:
   * those are written meanwhile, and a waiter for one of them is committed once it is written).
   */
  syncStream: (stream: string) => Promise<void>;
  /** The durable head of a stream with pending appends moved: its tails may read further. */
  notify: (stream: string) => void;
}

/** The sync mode's pending commits, by stream. */
export class LevelSyncCommits {
  /** Streams with written but not yet durable appends, their durable head and the writers waiting on them. */
  readonly #pending = new Map<string, PendingCommit>();
  readonly #delayMs: number;
  readonly #syncStream: (stream: string) => Promise<void>;
  readonly #notify: (stream: string) => void;
  /** Streams with a group commit's fsync under way. */
  readonly #running = new Set<string>();
  /** Streams whose writers asked for a commit while one ran: the next is arranged when it ends. */
  readonly #again = new Set<string>();

  constructor(options: LevelSyncCommitsOptions) {
    this.#delayMs = options.delayMs;
    this.#syncStream = options.syncStream;
    this.#notify = options.notify;
  }

  /** An append to `stream` was written without fsync: it is durable up to `durableHead`, written up to `writtenHead`. */
  written(stream: string, durableHead: number, writtenHead: number): void {
    const pending = this.#pendingOf(stream);
    pending.durableHead = durableHead;
    pending.writtenHead = writtenHead;
    // A writer that asked for a commit before its append was written (the commit ran, or runs, without it).
    if (pending.waiters.length > 0) this.#schedule(stream, pending);
  }

  /** Resolves once an fsync covered `seq` of `stream` (at once when nothing of it waits for one). */
  commit(stream: string, seq: number): Promise<void> {
    const pending = this.#pending.get(stream);
    if (pending === undefined || seq <= pending.durableHead) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      pending.waiters.push({ seq, resolve, reject });
      this.#schedule(stream, pending);
    });
  }

  /** The durable head of a stream with pending appends (what its tails may read up to), else undefined. */
  durableHeadOf(stream: string): number | undefined {
    return this.#pending.get(stream)?.durableHead;
  }

  /** A stream's durable head moved (any fsync of its database): release the writers waiting on it, wake the tails. */
  durable(stream: string, durableHead: number): void {
    const pending = this.#pending.get(stream);
    if (pending === undefined) return;
    pending.durableHead = Math.max(pending.durableHead, durableHead);
    const waiting = pending.waiters;
    pending.waiters = [];
    for (const waiter of waiting) {
      if (waiter.seq <= pending.durableHead) waiter.resolve();
      else pending.waiters.push(waiter);
    }
    if (pending.waiters.length > 0) this.#schedule(stream, pending);
    else if (pending.durableHead >= pending.writtenHead) {
      // Nothing left to commit (a synced append covered it): the arranged marker write would only cost an fsync.
      pending.timer?.();
      this.#pending.delete(stream);
    }
    this.#notify(stream);
  }

  /** Commit now what every stream's writers still wait for (on close). */
  async commitAll(): Promise<void> {
    await Promise.all([...this.#pending.keys()].map((stream) => {
      const pending = this.#pending.get(stream);
      pending?.timer?.();
      return this.#groupCommit(stream);
    }));
  }

  /**
   * Arrange one group commit of `stream` unless one is already arranged. While one runs, the next is arranged only when
   * it ends (`delayMs` later): one fsync at a time per stream, each gathering every waiter that came meanwhile. Started
   * back to back (a timer per waiter, each fsync waiting for the one before), they kept an fsync running nearly all
   * the time — one per append in a busy session — and every LevelDB write made meanwhile was slower for it.
   */
  #schedule(stream: string, pending: PendingCommit): void {
    if (pending.timer !== undefined) return;
    if (this.#running.has(stream)) {
      this.#again.add(stream);
      return;
    }
    const run = () => void this.#groupCommit(stream);
    if (this.#delayMs > 0) {
      const timer = setTimeout(run, this.#delayMs);
      pending.timer = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(run);
      pending.timer = () => clearImmediate(immediate);
    }
  }

  #pendingOf(stream: string): PendingCommit {
    let pending = this.#pending.get(stream);
    if (pending === undefined) {
      pending = { durableHead: 0, writtenHead: 0, waiters: [], timer: undefined };
      this.#pending.set(stream, pending);
    }
    return pending;
  }

  /** One fsync of `stream` (of what was written when it starts), releasing the waiting writers it covers. */
  async #groupCommit(stream: string): Promise<void> {
    const pending = this.#pending.get(stream);
    if (pending !== undefined) pending.timer = undefined;
    this.#running.add(stream);
    try {
      await this.#syncStream(stream);
    } catch (error) {
      const failed = this.#pending.get(stream);
      this.#pending.delete(stream);
      for (const waiter of failed?.waiters ?? []) waiter.reject(error);
    } finally {
      this.#running.delete(stream);
      const next = this.#again.delete(stream) ? this.#pending.get(stream) : undefined;
      if (next !== undefined && next.waiters.length > 0) this.#schedule(stream, next);
    }
  }
}
