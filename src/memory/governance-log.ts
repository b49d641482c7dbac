import { setTimeout as sleep } from 'node:timers/promises';
import { BehaviorSubject, type Observable } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { recordVersion } from '../../models/records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createIdGenerator } from '../host/record-ids.js';
import { memoryProjection, type MemoryView } from '../projections/memory.view.js';
import { rebuildView } from '../projections/projection.js';
import { MemoryError } from './memory-errors.js';
import { memoryStream } from './memory-stream.js';
import { isPromotion, type Promotion } from './promotion.js';

/** A governance record other than a promotion (promotions come only from `promoteCandidate`). */
export interface GovernanceRecordDraft {
  type: 'memory.submitted' | 'memory.reviewed' | 'memory.rejected' | 'memory.revoked' | 'memory.expired';
  data: Record<string, unknown>;
}

/** What a governance transaction appends: decisions, and promotions minted by `promoteCandidate`. */
export type GovernanceDraft = GovernanceRecordDraft | Promotion;

/** Who writes a batch (the envelope's `actor`) and what it concerns (`corr`, e.g. the session governed). */
export interface TransactOptions {
  actor?: string;
  corr?: string;
}

const retryable = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code;
  return code === 'STORE_CONFLICT' || code === 'STORE_LOCKED';
};

/**
 * The workspace's governance stream (`memory`): its view, folded incrementally, and the only writer of store
 * records. Every access lets go of the stream right after (`EventStore.release`), so the CLI and any number of
 * session processes can each write it in turn while the others run. Writes are optimistic transactions: read
 * what is new, decide on the current view, append with `expectedSeq`; when another process got there first (a
 * moved head, or the database held for a moment) the decision is made again on the new view.
 */
export class GovernanceLog {
  readonly #store: EventStore;
  readonly #clock: () => number;
  readonly #newId: () => string;
  readonly #attempts: number;
  readonly #view$: BehaviorSubject<MemoryView>;

  constructor(store: EventStore, options: { clock?: () => number; attempts?: number; newId?: () => string } = {}) {
    this.#store = store;
    this.#newId = options.newId ?? createIdGenerator();
    this.#clock = options.clock ?? Date.now;
    this.#attempts = options.attempts ?? 40;
    this.#view$ = new BehaviorSubject(memoryProjection.initial());
  }

  /** The view as last read (`refresh` or a transaction brings it up to date). */
  get view(): MemoryView {
    return this.#view$.value;
  }

  /** The view, each time it moves. */
  get view$(): Observable<MemoryView> {
    return this.#view$.asObservable();
  }

  /** Read the records appended since the view's seq (by anyone) and fold them; resolves with the new view. */
  async refresh(): Promise<MemoryView> {
    try {
      const records = await this.#store.read(memoryStream, { from: this.view.seq + 1 });
      if (records.length > 0) this.#view$.next(rebuildView(memoryProjection, records, this.view));
      return this.view;
    } finally {
      await this.#store.release?.(memoryStream);
    }
  }

  /**
   * Decide on the current view and append the decision as one atomic batch. `decide` may run more than once (after
   * another writer moved the stream) and must be pure; an empty decision writes nothing. A `memory.promoted` draft
   * not made by `promoteCandidate` is refused with `MEMORY_PROMOTION_REQUIRED` (nothing is written). After the
   * attempts run out, `MEMORY_BUSY`.
   */
  async transact(decide: (view: MemoryView) => readonly GovernanceDraft[], options: TransactOptions = {}): Promise<RecordEnvelope[]> {
    let lastError: unknown;
    for (let attempt = 0; attempt < this.#attempts; attempt++) {
      if (attempt > 0) await sleep(Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));
      const view = await this.refresh();
      const drafts = decide(view);
      for (const draft of drafts) {
        if (draft.type === 'memory.promoted' && !isPromotion(draft)) throw new MemoryError('MEMORY_PROMOTION_REQUIRED', 'a store record can only be written by promoteCandidate');
      }
      if (drafts.length === 0) return [];
      const at = this.#clock();
      const batch: RecordDraft[] = drafts.map((draft) => ({ id: this.#newId(), type: draft.type, v: recordVersion(draft.type), at, actor: options.actor ?? 'governance', ...(options.corr ? { corr: options.corr } : {}), data: draft.data }));
      try {
        const stored = await this.#store.append(memoryStream, batch, { expectedSeq: view.seq, sync: true });
        this.#view$.next(rebuildView(memoryProjection, stored, view));
        return stored;
      } catch (error) {
        if (!retryable(error)) throw error;
        lastError = error;
      } finally {
        await this.#store.release?.(memoryStream);
      }
    }
    throw new MemoryError('MEMORY_BUSY', `the governance stream stayed busy for ${this.#attempts} attempts`, { cause: lastError });
  }
}
