import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { statusOfState } from '../host/session-status.js';
import { reducerOf } from '../projections/projection.js';
import { traceProjection, type TraceView } from '../projections/trace.view.js';
import { analyzeTrace, traceOutcomeOf } from '../trace/trace-analyzer.js';
import type { TraceOutcome, TraceReport } from '../trace/trace-types.js';
import { blobText } from '../session/session-records.js';
import { KeyedSerialQueue } from '../../stores/task-queues.js';
import { timelineOf } from './timeline.js';
import { foldSpan } from '../session/session-span.js';
import { CostFold } from '../projections/cost.js';
import { defaultPrices, type Prices } from '../../models/price-table.js';

/** What the server keeps of one session: its trace view folded up to `head`, and the counts a list row shows. */
export interface SessionDigest {
  id: string;
  head: number;
  view: TraceView;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number; estimated: boolean };
  /** The session's own span (`foldSpan`): from its own first record (a fork's `session.forked`), rewinds left out. */
  firstAt: number;
  lastAt: number;
  /** The session's cost at the server's prices, folded with the rest (per agent; no per-call list kept). */
  cost: CostFold;
  /** The analysis of the view at `head`, once asked for. */
  report?: TraceReport;
  /** The timeline of the view at `head`, once asked for. */
  timeline?: ReturnType<typeof timelineOf>;
}

/** Records per read: small enough that a first read of a long session leaves the server answering other requests. */
const PAGE = 500;
const FIRST_PAGE = 200;
const reduce = reducerOf(traceProjection);

const fold = (digest: SessionDigest, record: RecordEnvelope): void => {
  digest.view = reduce(digest.view, record);
  digest.head = record.seq;
  foldSpan(digest, record);
  digest.cost.add(record);
  if (record.type === 'model.responded') {
    const usage = (record.data as { usage?: { inputTokens?: number; outputTokens?: number; estimated?: boolean } }).usage;
    digest.turns += 1;
    digest.tokens.input += usage?.inputTokens ?? 0;
    digest.tokens.output += usage?.outputTokens ?? 0;
    if (usage?.estimated) digest.tokens.estimated = true;
  } else if (record.type === 'tool.settled') digest.toolCalls += 1;
};

/**
 * Session digests, folded forward from where they were on each use (a session's records are read once, whatever
 * the number of requests: the cost of a request is the records appended since the last one), at most `limit` kept.
 */
export class DigestCache {
  readonly #store: EventStore;
  readonly #limit: number;
  /** What the digests' cost is charged at. */
  readonly prices: Prices;
  readonly #entries = new Map<string, SessionDigest>();
  readonly #queue = new KeyedSerialQueue();
  /** Who waits for the next page of a session's fold. */
  readonly #progress = new Map<string, Array<() => void>>();

  /** `prices`: what the digests' cost is charged at (default the shipped `defaultPrices`). */
  constructor(store: EventStore, limit = 32, prices: Prices = defaultPrices) {
    this.#store = store;
    this.#limit = limit;
    this.prices = prices;
  }

  /** The session's digest as of its head now; undefined for a session with no record. */
  get(id: string): Promise<SessionDigest | undefined> {
    return this.#queue.run(id, async () => {
      const head = await this.#store.head(id);
      if (head === 0) return undefined;
      let digest = this.#entries.get(id);
      if (digest === undefined || digest.head > head) {
        digest = { id, head: 0, view: traceProjection.initial(), turns: 0, toolCalls: 0, tokens: { input: 0, output: 0, estimated: false }, firstAt: 0, lastAt: 0, cost: new CostFold(this.prices, { keepCalls: false }) };
        // Visible while it is folded, page by page (`current`).
        this.#entries.set(id, digest);
      }
      while (digest.head < head) {
        // A small first page, so a reader of a long session sees its beginning soon (`current`).
        const page = upcastRecords(await this.#store.read(id, { from: digest.head + 1, to: head, limit: digest.head === 0 ? FIRST_PAGE : PAGE }));
        if (page.length === 0) break;
        for (const record of page) fold(digest, record);
        delete digest.report;
        delete digest.timeline;
        const waiting = this.#progress.get(id);
        this.#progress.delete(id);
        for (const resolve of waiting ?? []) resolve();
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      this.#entries.delete(id);
      this.#entries.set(id, digest);
      if (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
      return digest;
    });
  }

  /**
   * The digest as far as it is folded within `budgetMs` (the fold goes on in the background): a first read of a long
   * session answers with what is folded so far (`complete: false`) instead of making its reader wait for all of it.
   */
  async current(id: string, budgetMs: number): Promise<{ digest: SessionDigest; complete: boolean } | undefined> {
    const full = this.get(id);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const first = await Promise.race([full.then((digest) => ({ digest })), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), budgetMs)))]);
    clearTimeout(timer);
    if (first !== undefined) return first.digest ? { digest: first.digest, complete: true } : undefined;
    full.catch(() => undefined);
    let partial = this.#entries.get(id);
    if (partial === undefined || partial.head === 0) {
      // Not even a page read yet: wait for the first one (or the end, for a short session).
      const page = new Promise<void>((resolve) => this.#progress.set(id, [...(this.#progress.get(id) ?? []), resolve]));
      const ended = await Promise.race([full.then((digest) => ({ digest })), page.then(() => undefined)]);
      if (ended !== undefined) return ended.digest ? { digest: ended.digest, complete: true } : undefined;
      partial = this.#entries.get(id);
      if (partial === undefined) return undefined;
    }
    return { digest: partial, complete: false };
  }

  /** The digest's timeline (computed once per head). */
  timeline(digest: SessionDigest): ReturnType<typeof timelineOf> {
    if (digest.timeline) return digest.timeline;
    const timeline = timelineOf(digest.view, digest.report?.findings ?? []);
    digest.timeline = timeline;
    return timeline;
  }

  /** The trace report of the session at its head now (computed once per head). */
  async report(id: string): Promise<{ digest: SessionDigest; report: TraceReport } | undefined> {
    const digest = await this.get(id);
    if (!digest) return undefined;
    if (digest.report) return { digest, report: digest.report };
    const { head, view } = digest;
    const report = await analyzeTrace(view, blobText(this.#store, id));
    // Kept only while the digest has not moved on meanwhile (its timeline then carries the findings).
    if (digest.head === head) {
      digest.report = report;
      delete digest.timeline;
    }
    return { digest, report };
  }
}

/** The session's status as `rein sessions` lists it, from the digest's view. */
export const digestStatus = (digest: SessionDigest): string => statusOfState(digest.view.status) ?? 'active';

/** The trace outcome of the digest's view. */
export const digestOutcome = (digest: SessionDigest): TraceOutcome => digest.report?.outcome ?? traceOutcomeOf(digest.view);
