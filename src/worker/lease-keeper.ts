import { performance } from 'node:perf_hooks';
import type { PostgresSessionQueue, SessionLease } from '../../stores/postgres/postgres-session-queue.js';
import { ReinError } from '../host/host-errors.js';

/**
 * Keeps one lease alive: renews it every third of its length and knows, by this process's monotonic clock, until when
 * it surely holds (the start of the last successful renewal plus the lease length: the server's expiry is never
 * earlier). Past that moment — a pause, a partition, a slow server — `check` refuses every new effect, and a failed
 * renewal calls `onLost`.
 */
export class LeaseKeeper {
  readonly lease: SessionLease;
  readonly #queue: PostgresSessionQueue;
  readonly #leaseMs: number;
  readonly #onLost: (reason: string) => void;
  readonly #timer: NodeJS.Timeout;
  #validUntil: number;
  #lost: string | undefined;
  #renewing = false;

  constructor(options: { queue: PostgresSessionQueue; lease: SessionLease; leaseMs: number; claimedAt: number; onLost: (reason: string) => void }) {
    this.lease = options.lease;
    this.#queue = options.queue;
    this.#leaseMs = options.leaseMs;
    this.#onLost = options.onLost;
    this.#validUntil = options.claimedAt + options.leaseMs;
    this.#timer = setInterval(() => void this.#renew(), Math.max(10, Math.floor(options.leaseMs / 3)));
  }

  /** An error once the lease may have lapsed (or was lost), else undefined: the effect gate of the lease's session. */
  check = (): Error | undefined => {
    if (this.#lost) return new ReinError('LEASE_LOST', `lease on ${this.lease.session} lost: ${this.#lost}`);
    if (performance.now() > this.#validUntil) return new ReinError('LEASE_LOST', `lease on ${this.lease.session} may have expired (not renewed in time)`);
    return undefined;
  };

  get lost(): string | undefined {
    return this.#lost;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #renew(): Promise<void> {
    if (this.#renewing || this.#lost) return;
    this.#renewing = true;
    const startedAt = performance.now();
    try {
      const held = await this.#queue.renew(this.lease, this.#leaseMs);
      if (held) this.#validUntil = Math.max(this.#validUntil, startedAt + this.#leaseMs);
      else this.#lose(`epoch ${this.lease.epoch} is no longer ${this.lease.owner}'s`);
    } catch (error) {
      // Unreachable server: keep trying while the lease may still hold; past it, the lease is lost for this process.
      if (performance.now() > this.#validUntil) this.#lose(`could not renew: ${(error as Error).message}`);
    } finally {
      this.#renewing = false;
    }
  }

  #lose(reason: string): void {
    if (this.#lost) return;
    this.#lost = reason;
    this.stop();
    this.#onLost(reason);
  }
}
