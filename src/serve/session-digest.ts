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

/** What the server keeps of one session: its trace view folded up to `head`, and the counts a list row shows. */
export interface SessionDigest {
  id: string;
  head: number;
  view: TraceView;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number; estimated: boolean };
  firstAt: number;
  lastAt: number;
  /** The analysis of the view at `head`, once asked for. */
  report?: TraceReport;
}

const PAGE = 2_000;
const reduce = reducerOf(traceProjection);

const fold = (digest: SessionDigest, record: RecordEnvelope): void => {
  digest.view = reduce(digest.view, record);
  digest.head = record.seq;
  if (digest.firstAt === 0) digest.firstAt = record.at;
  digest.lastAt = Math.max(digest.lastAt, record.at);
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
  readonly #entries = new Map<string, SessionDigest>();
  readonly #queue = new KeyedSerialQueue();

  constructor(store: EventStore, limit = 32) {
    this.#store = store;
    this.#limit = limit;
  }

  /** The session's digest as of its head now; undefined for a session with no record. */
  get(id: string): Promise<SessionDigest | undefined> {
    return this.#queue.run(id, async () => {
      const head = await this.#store.head(id);
      if (head === 0) return undefined;
      let digest = this.#entries.get(id);
      if (digest === undefined || digest.head > head) digest = { id, head: 0, view: traceProjection.initial(), turns: 0, toolCalls: 0, tokens: { input: 0, output: 0, estimated: false }, firstAt: 0, lastAt: 0 };
      while (digest.head < head) {
        const page = upcastRecords(await this.#store.read(id, { from: digest.head + 1, to: head, limit: PAGE }));
        if (page.length === 0) break;
        for (const record of page) fold(digest, record);
        delete digest.report;
      }
      this.#entries.delete(id);
      this.#entries.set(id, digest);
      if (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
      return digest;
    });
  }

  /** The trace report of the session at its head now (computed once per head). */
  async report(id: string): Promise<{ digest: SessionDigest; report: TraceReport } | undefined> {
    const digest = await this.get(id);
    if (!digest) return undefined;
    if (digest.report) return { digest, report: digest.report };
    const { head, view } = digest;
    const report = await analyzeTrace(view, blobText(this.#store, id));
    // Kept only while the digest has not moved on meanwhile.
    if (digest.head === head) digest.report = report;
    return { digest, report };
  }
}

/** The session's status as `rein sessions` lists it, from the digest's view. */
export const digestStatus = (digest: SessionDigest): string => statusOfState(digest.view.status) ?? 'active';

/** The trace outcome of the digest's view. */
export const digestOutcome = (digest: SessionDigest): TraceOutcome => digest.report?.outcome ?? traceOutcomeOf(digest.view);
