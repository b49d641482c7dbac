import type { EventStore, StreamInfo } from '../../stores/event-store.js';
import type { Rein } from '../rein.js';
import type { SessionSummary } from '../session/session-catalog.js';
import { ReinError } from '../host/host-errors.js';
import type { AgentCostRow, PendingApproval, SessionRow } from './api-schemas.js';
import { cacheHitRate } from '../projections/cost.js';
import { usageCost, type UsageSummary } from '../projections/usage-summary.js';
import type { Prices } from '../../models/price-table.js';
import { digestOutcome, type DigestCache, type SessionDigest } from './session-digest.js';
import type { SessionControl } from './session-control.js';
import { ServeError } from './serve-errors.js';

/*
 * What the JSON API's routes share (api-read-routes.ts, api-action-routes.ts): the context they read and act
 * through, and the helpers they answer with (session rows, digests, the stream list, pending approvals, the
 * read-only refusal).
 */

/** What the API routes read and act through. */
export interface ApiContext {
  store: EventStore;
  digests: DigestCache;
  rein?: Rein;
  control?: SessionControl;
  /** Ends every open event stream on `close`. */
  streams: Set<() => void>;
  /** The built page's directory, for exports (default: the package's). */
  assets?: string;
  /** What routes keep between requests. */
  cache: { streams?: { at: number; infos: StreamInfo[] } };
}

/** How long a request waits for a first read of a long session before it answers with what is read so far. */
export const FOLD_BUDGET_MS = 400;

/**
 * A session's API row. Its cost is the listing's usage (the whole tree's, read with the session's summary) priced at
 * `prices` when both are there — complete even while the digest is still partial; otherwise the digest's cost fold.
 */
export const rowOf = (summary: SessionSummary, digest: SessionDigest | undefined, rein: Rein | undefined, complete = true, prices?: Prices): SessionRow => ({
  ...summary,
  ...(digest && complete ? { outcome: digestOutcome(digest) } : {}),
  indexed: complete,
  turns: digest?.turns ?? 0,
  toolCalls: digest?.toolCalls ?? 0,
  tokens: digest?.tokens ?? { input: 0, output: 0, estimated: false },
  updatedAt: digest?.lastAt ?? summary.createdAt,
  durationMs: digest ? Math.max(0, digest.lastAt - digest.firstAt) : 0,
  runningHere: rein?.session(summary.id) !== undefined,
  ...(digest ? costFields(digest) : {}),
  ...(summary.usage && prices ? usageFields(summary.usage, prices) : {}),
});

/** The row's cost fields from the listing's usage at `prices`. */
const usageFields = (usage: UsageSummary, prices: Prices): Pick<SessionRow, 'costUsd' | 'costUnpriced' | 'cacheHitRate'> => {
  const cost = usageCost(usage, prices);
  const rate = cacheHitRate(usage);
  return { ...('usd' in cost ? { costUsd: cost.usd } : { costUnpriced: [cost.unpriced] }), ...(rate === undefined ? {} : { cacheHitRate: rate }) };
};

/** The row's cost fields from the digest's cost fold. */
const costFields = (digest: SessionDigest): Pick<SessionRow, 'costUsd' | 'costUnpriced' | 'cacheHitRate'> => {
  const { cost } = digest;
  const rate = cacheHitRate(cost);
  return { ...(cost.usd === undefined ? { costUnpriced: [...cost.unpriced] } : { costUsd: cost.usd }), ...(rate === undefined ? {} : { cacheHitRate: rate }) };
};

/** Each agent's share of the digest's cost, in the order the agents first answered. */
export const agentCosts = (digest: SessionDigest): AgentCostRow[] =>
  [...digest.cost.byActor].map(([actor, entry]) => {
    const rate = cacheHitRate(entry);
    return { actor, calls: entry.calls, ...(entry.usd === undefined ? {} : { costUsd: entry.usd }), inputTokens: entry.inputTokens, cacheReadTokens: entry.cacheReadTokens, ...(rate === undefined ? {} : { cacheHitRate: rate }) };
  });

export const needDigest = async (context: ApiContext, id: string): Promise<SessionDigest> => {
  const digest = await context.digests.get(id);
  if (!digest) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
  return digest;
};

/** The store's streams, read at most every few seconds (a fork made here is seen at once: `forked` clears it). */
export const STREAMS_TTL_MS = 5_000;
export const streamsOf = async (context: ApiContext): Promise<StreamInfo[]> => {
  const cached = context.cache.streams;
  if (cached && Date.now() - cached.at < STREAMS_TTL_MS) return cached.infos;
  const infos = await context.store.streams().catch(() => []);
  context.cache.streams = { at: Date.now(), infos };
  return infos;
};

export const needControl = (context: ApiContext): SessionControl => {
  if (!context.control) throw new ServeError('SERVE_READ_ONLY', 'this server is read-only: it takes no actions');
  return context.control;
};

/** The approvals the log says a session waits for (asked, not answered), with the seq they were asked at. */
export const pendingApprovals = async (context: ApiContext, id: string, status: string): Promise<PendingApproval[]> => {
  const running = context.rein?.session(id);
  if (running) return running.pendingApprovals();
  if (status !== 'awaiting-approval') return [];
  const records = await context.store.read(id);
  const answered = new Set(records.filter((record) => record.type === 'approval.replied').map((record) => String((record.data as { approvalId?: unknown }).approvalId)));
  return records
    .filter((record) => record.type === 'approval.requested' && !answered.has(String((record.data as { approvalId?: unknown }).approvalId)))
    .map((record) => {
      const { elapsedMs: _elapsed, ...data } = record.data as PendingApproval & { elapsedMs?: number };
      return { ...data, actor: record.actor, seq: record.seq };
    });
};

export const matches = (row: SessionRow, text: string): boolean => {
  const needle = text.trim().toLowerCase();
  return needle === '' || row.id.toLowerCase().includes(needle) || row.task.toLowerCase().includes(needle);
};
