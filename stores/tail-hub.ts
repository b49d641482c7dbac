import { createRequire } from 'node:module';
import type { Observable } from 'rxjs';
import type { RecordEnvelope } from '../models/envelope.js';
import type { ReadOptions } from './event-store.js';

/** How a tail reads history: the store's own `read`, still usable while the store is closing. */
export type TailRead = (stream: string, options: ReadOptions) => Promise<RecordEnvelope[]>;

/**
 * How a store learns of appends other processes make to `stream`: calls `wake` for each (or for anything that may be
 * one) and returns the function that stops. Started with the first tail of a stream, stopped with its last.
 */
export type TailFollow = (stream: string, wake: () => void) => () => void;

const PAGE_SIZE = 1000;

/**
 * rxjs is loaded on the first `tail`, not when the store is imported: a command that only reads (`rein sessions`,
 * `rein show`) never pays for it. Node resolves `rxjs` to the same CommonJS build for `import` and `require`, so the
 * class is the one every other module imports.
 */
let observableClass: typeof Observable | undefined;
const ObservableOf = (): typeof Observable => (observableClass ??= (createRequire(import.meta.url)('rxjs') as typeof import('rxjs')).Observable);

/**
 * Serves `EventStore.tail` for one store. A tail reads history page by page from `from`, then re-reads from its
 * next seq whenever the store reports an append to its stream, so it emits every record once, in seq order, with no
 * gap and no duplicate. `close` lets every tail drain what was appended and then completes it.
 */
export class TailHub {
  readonly #read: TailRead;
  readonly #wakers = new Map<string, Set<() => void>>();
  readonly #closers = new Set<() => Promise<void>>();
  readonly #follow: TailFollow | undefined;
  readonly #following = new Map<string, () => void>();
  /** Per stream, each live tail's next seq to hand over and the pump that moves it. */
  readonly #positions = new Map<string, Set<{ next: () => number; pump: () => Promise<void>; stopped: () => boolean }>>();
  #closed = false;

  /** `follow`, when given, watches a stream for other writers while it has tails (see `TailFollow`). */
  constructor(read: TailRead, follow?: TailFollow) {
    this.#read = read;
    this.#follow = follow;
  }

  /** Tells the tails of `stream` that records were appended. */
  notify(stream: string): void {
    for (const wake of this.#wakers.get(stream) ?? []) wake();
  }

  /** Tells every tail to look for new records (after a missed notification, or on a polling tick). */
  notifyAll(): void {
    for (const wakers of this.#wakers.values()) for (const wake of wakers) wake();
  }

  /** True while some tail is subscribed (so a store knows whether to listen or poll for other writers). */
  get active(): boolean {
    return this.#wakers.size > 0;
  }

  /**
   * Resolves once every tail of `stream` subscribed now has handed its subscriber every record up to `seq` (or has
   * stopped): what a host waits for before it reads what its subscribers saw (`session.whenQuiet()`). Each tail reads
   * from where it is, so this costs what the tails had left to read, not the stream's length.
   */
  async delivered(stream: string, seq: number): Promise<void> {
    for (;;) {
      const behind = [...(this.#positions.get(stream) ?? [])].filter((tail) => !tail.stopped() && tail.next() <= seq);
      if (behind.length === 0) return;
      const before = behind.map((tail) => tail.next());
      await Promise.all(behind.map((tail) => tail.pump()));
      // A tail that read and found nothing more (the records are not readable here) cannot get further: stop waiting.
      if (behind.every((tail, index) => tail.next() === before[index])) return;
    }
  }

  /** Drains every tail, completes them, and refuses new ones (they complete right after their history). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const stop of this.#following.values()) stop();
    this.#following.clear();
    await Promise.all([...this.#closers].map((finish) => finish()));
  }

  tail(stream: string, from = 1): Observable<RecordEnvelope> {
    const ObservableClass = ObservableOf();
    return new ObservableClass<RecordEnvelope>((subscriber) => {
      let next = Math.max(from, 1);
      let stopped = false;
      let again = false;
      let closing = false;
      let pumping: Promise<void> | undefined;

      const drain = async (): Promise<void> => {
        for (;;) {
          const page = await this.#read(stream, { from: next, limit: PAGE_SIZE });
          for (const record of page) {
            if (stopped) return;
            next = record.seq + 1;
            subscriber.next(record);
          }
          if (page.length < PAGE_SIZE) return;
        }
      };
      const run = async (): Promise<void> => {
        try {
          do {
            again = false;
            await drain();
          } while (again && !stopped);
        } catch (error) {
          if (!stopped) subscriber.error(error);
          stopped = true;
        }
        pumping = undefined;
        if (closing && !stopped) {
          stopped = true;
          subscriber.complete();
        }
      };
      const pump = (): Promise<void> => {
        if (stopped) return Promise.resolve();
        if (pumping) {
          again = true;
          return pumping;
        }
        pumping = run();
        return pumping;
      };
      const finish = (): Promise<void> => {
        closing = true;
        return pump();
      };

      const wakers = this.#wakers.get(stream) ?? new Set<() => void>();
      this.#wakers.set(stream, wakers);
      wakers.add(pump);
      const position = { next: () => next, pump, stopped: () => stopped };
      const positions = this.#positions.get(stream) ?? new Set();
      this.#positions.set(stream, positions);
      positions.add(position);
      if (this.#follow && !this.#closed && !this.#following.has(stream)) this.#following.set(stream, this.#follow(stream, () => this.notify(stream)));
      this.#closers.add(finish);
      if (this.#closed) void finish();
      else void pump();

      return () => {
        stopped = true;
        wakers.delete(pump);
        if (wakers.size === 0 && this.#wakers.get(stream) === wakers) {
          this.#wakers.delete(stream);
          this.#following.get(stream)?.();
          this.#following.delete(stream);
        }
        this.#closers.delete(finish);
        positions.delete(position);
        if (positions.size === 0 && this.#positions.get(stream) === positions) this.#positions.delete(stream);
      };
    });
  }
}
