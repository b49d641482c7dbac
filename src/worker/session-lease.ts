import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { EventStore } from '../../stores/event-store.js';
import type { PostgresSessionQueue, SessionLease } from '../../stores/postgres/postgres-session-queue.js';
import { ReinError } from '../host/host-errors.js';
import type { SessionResult } from '../host/session-host.js';
import type { ReinSession } from '../session/session-handle.js';
import { fencedStore } from './fenced-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import { confirmationsOf, QueuedAnswer } from './queued-session.js';

/** A queued session held under a lease by a process that is not a worker (`rein resume`). */
export interface HeldSession {
  lease: SessionLease;
  /** The store as the session must see it: its appends fenced by the lease. */
  store: EventStore;
  /** The effect gate for `createRein`. */
  effectGate: () => Error | undefined;
  /** The confirmations `rein approve` left for the session's in-doubt effects, for `resumeSession`. */
  confirmations: { confirmEffects: string[]; declineEffects: string[] };
  /** Apply the approval answers `rein approve` left for the session, then drop them. */
  applyAnswers(session: ReinSession): Promise<number>;
  /** Stop renewing and let go: `done`, `parked` (waiting for a person) or `queued` (for a worker), by the result. */
  release(result: SessionResult): Promise<void>;
  /**
   * Let go before the session was resumed (it was refused: its chain not this machine's, a missing provider, …): back
   * to the state it was claimed from (`parked` stays waiting for its person, else `queued`), at once rather than when
   * the lease expires.
   */
  giveBack(): Promise<void>;
  /** Stop renewing without letting go (the lease then expires). */
  stop(): void;
}

/**
 * Take the lease of a queued session by name (queued, parked, or running under an expired lease) for this process,
 * renewing it until `release`. Undefined when the session was never queued; `SESSION_LEASED` when a live lease holds it.
 */
export const holdQueuedSession = async (options: { queue: PostgresSessionQueue; store: EventStore; session: string; leaseMs?: number; onLost: (reason: string) => void }): Promise<HeldSession | undefined> => {
  const entry = await options.queue.entry(options.session);
  if (!entry || entry.state === 'done') return undefined;
  if (entry.lease && entry.lease.expiresAt > Date.now()) {
    throw new ReinError('SESSION_LEASED', `session ${options.session} is running on worker ${entry.lease.owner} (epoch ${entry.lease.epoch})`);
  }
  const leaseMs = options.leaseMs ?? 15_000;
  const claimedAt = performance.now();
  const claimed = await options.queue.claim(`${hostname()}:${process.pid}:resume`, leaseMs, options.session);
  if (!claimed) throw new ReinError('SESSION_LEASED', `session ${options.session} was just taken by a worker`);
  const keeper = new LeaseKeeper({ queue: options.queue, lease: claimed.lease, leaseMs, claimedAt, onLost: options.onLost });
  return {
    lease: claimed.lease,
    store: fencedStore(options.store, claimed.lease),
    effectGate: keeper.check,
    confirmations: confirmationsOf(claimed.answers),
    applyAnswers: async (session) => {
      const answers = await options.queue.answers(claimed.lease);
      for (const raw of answers) {
        const answer = QueuedAnswer.safeParse(raw);
        if (!answer.success) continue;
        await session.approve(answer.data.approvalId, { decision: answer.data.decision, ...(answer.data.feedback ? { feedback: answer.data.feedback } : {}) }).catch((error: { code?: string }) => {
          if (error.code !== 'APPROVAL_NOT_FOUND') throw error;
        });
      }
      await options.queue.dropAnswers(claimed.lease, answers.length);
      return answers.length;
    },
    release: async (result) => {
      keeper.stop();
      const state = result.status === 'paused' ? 'parked' : result.status === 'interrupted' ? 'queued' : 'done';
      // Parking refuses while answers wait: hand the session to a worker then, which applies them.
      if ((await options.queue.release(claimed.lease, state)) === 'running') await options.queue.release(claimed.lease, 'queued');
    },
    giveBack: async () => {
      keeper.stop();
      const state = entry.state === 'parked' ? 'parked' : 'queued';
      if ((await options.queue.release(claimed.lease, state)) === 'running') await options.queue.release(claimed.lease, 'queued');
    },
    stop: () => keeper.stop(),
  };
};
