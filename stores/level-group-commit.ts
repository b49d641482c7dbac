/**
 * Group commit for the relaxed durability mode: after an unsynced write, `schedule` arranges one `commit` (an fsync
 * of the log of each stream with unsynced data) `intervalMs` later, so many appends share one fsync. The timer never keeps
 * the process alive. A failed commit is kept and raised by the next `takeFailure`, so a lost fsync is not ignored.
 */
export class GroupCommitter {
  readonly #intervalMs: number;
  readonly #commit: () => Promise<void>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #failure: unknown;

  constructor(options: { intervalMs: number; commit: () => Promise<void> }) {
    this.#intervalMs = options.intervalMs;
    this.#commit = options.commit;
  }

  /** Arranges a commit within `intervalMs` unless one is already pending. */
  schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((error: unknown) => {
        this.#failure ??= error;
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Commits now (after any commit in progress) and resolves when the unsynced writes are durable. */
  async flush(): Promise<void> {
    if (this.#running !== undefined) await this.#running.catch(() => undefined);
    this.#running = this.#commit();
    try {
      await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  /** Raises (once) the error of a commit that failed in the background. */
  takeFailure(): void {
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure !== undefined) throw failure;
  }

  /** Cancels the pending timer; the caller makes the final commit itself. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
