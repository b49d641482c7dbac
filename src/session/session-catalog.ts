import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore, ListingEntry, StreamInfo } from '../../stores/event-store.js';
import type { WaitingEntry } from '../../stores/postgres/postgres-session-queue.js';
import { sessionStatusOf } from '../host/session-status.js';
import { isReservedStreamName, memoryStream } from '../memory/memory-stream.js';
import { mapWithLimit } from '../../stores/task-queues.js';
import { ReinError } from '../host/host-errors.js';
import { readSessionOutcome } from '../trace/session-outcome.js';
import { emptyUsage, isUsageSummary, usageOf, type UsageSummary } from '../projections/usage-summary.js';
import type { TraceOutcome } from '../trace/trace-types.js';

/**
 * One line of `rein sessions`. `status` is a final outcome; `forked` for a fork nobody resumed yet; `interrupted`, `awaiting-approval`,
 * `awaiting-confirmation`, `idle` or `active` for a session that has not ended; `queued` for one submitted for a
 * worker that has no record yet (`failed`, with `reason`, when no worker could start it); or `damaged` for one whose
 * log cannot be read (`damaged` then names the error).
 */
export interface SessionSummary {
  id: string;
  status: string;
  /**
   * How it really ended, as `rein trace` says (`sessionOutcome`): for a `completed` session `succeeded`, `unverified`
   * or `failed` (its last verification failed); otherwise what its status stands for. Absent for a queued or damaged one.
   */
  outcome?: TraceOutcome;
  head: number;
  createdAt: number;
  task: string;
  forkedFrom?: { stream: string; seq: number };
  damaged?: { code: string; message: string };
  /** Why a queued session no worker could start is `failed` (or, still `queued`, why its last try did not start). */
  reason?: string;
  /**
   * The tokens the whole tree spent (children included) and the model they are priced at — facts, from the running
   * summary the session host keeps with the log (folded from the log when absent); price them with `usageCost`.
   * Absent for a queued or damaged session.
   */
  usage?: UsageSummary;
}

/** The status the newest records (newest first) leave the session in; `active` when none of them decides it. */
const statusOf = (newestFirst: readonly RecordEnvelope[]): string => sessionStatusOf([...newestFirst].reverse()) ?? 'active';

/** Summarise one session from its first record and the last few (cheap: two bounded reads). */
export const summarizeSession = async (store: EventStore, id: string): Promise<SessionSummary | undefined> => {
  if (isReservedStreamName(id)) return undefined;
  const info = await store.info(id);
  if (!info || info.head === 0) return undefined;
  const [first] = await store.read(id, { limit: 1 });
  const tail = await store.read(id, { reverse: true, limit: 64 });
  const task = first?.type === 'session.created' ? String((first.data as { task?: unknown }).task ?? '') : '';
  const status = statusOf(tail);
  const outcome = await readSessionOutcome(store, id, status);
  const usage = await usageAt(store, id, info, tail);
  return { id, status, ...(outcome ? { outcome } : {}), head: info.head, createdAt: info.createdAt, task, ...(info.forkedFrom ? { forkedFrom: info.forkedFrom } : {}), usage };
};

/**
 * The session's usage at its head: the writer's running summary (`StreamInfo.summary`) plus the records after it (the
 * newest ones, usually already read; none when it is current), or the whole log folded when there is none (a session
 * an earlier build wrote, a fork, a store that keeps no summary) — read page by page.
 */
const usageAt = async (store: EventStore, id: string, info: StreamInfo, newestFirst: readonly RecordEnvelope[]): Promise<UsageSummary> => {
  const summary = info.summary !== undefined && info.summary.seq <= info.head && isUsageSummary(info.summary.value) ? { seq: info.summary.seq, usage: info.summary.value } : undefined;
  let usage = summary?.usage ?? emptyUsage;
  let from = (summary?.seq ?? 0) + 1;
  const oldestRead = newestFirst[newestFirst.length - 1]?.seq;
  if (oldestRead !== undefined && oldestRead <= from) return usageOf(newestFirst.filter((record) => record.seq >= from).reverse(), usage);
  while (from <= info.head) {
    const page = await store.read(id, { from, to: info.head, limit: USAGE_PAGE });
    if (page.length === 0) break;
    usage = usageOf(page, usage);
    from = page[page.length - 1]!.seq + 1;
  }
  return usage;
};

const USAGE_PAGE = 1_000;

/**
 * Every status `rein sessions` lists: a `session.ended` outcome, then those of a session that has not ended, `queued`
 * (submitted for a worker, no record yet) and `damaged` (its log cannot be read).
 */
export const sessionStatuses = ['completed', 'failed', 'cancelled', 'budget-exhausted', 'forked', 'interrupted', 'awaiting-budget', 'awaiting-approval', 'awaiting-confirmation', 'idle', 'active', 'queued', 'damaged'] as const;

/** Options of `listSessions`. */
export interface ListSessionsOptions {
  /** Only sessions in this status (`active`, `awaiting-approval`, `completed`, `damaged`, …). */
  status?: string;
  /** At most this many sessions (a page); the next page starts `after` the last one's id. */
  limit?: number;
  /** The cursor: list only the sessions that come after the session with this id (oldest first). */
  after?: string;
}

const PAGE = 200;

/** A session whose log cannot be read: listed with its error, never left out. */
const damagedSummary = (id: string, error: unknown): SessionSummary => {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'ERROR';
  return { id, status: 'damaged', head: 0, createdAt: 0, task: '', damaged: { code, message: (error as Error).message ?? String(error) } };
};

/** How many sessions a listing reads at a time (each may be a throwaway copy of its database). */
const LISTING_CONCURRENCY = 16;

const summarizeAll = async (store: EventStore, names: readonly string[]): Promise<SessionSummary[]> => {
  const listed = names.filter((name) => !isReservedStreamName(name));
  const cache = store.listingCache?.();
  if (!cache) {
    const summaries = await mapWithLimit(listed, LISTING_CONCURRENCY, (name) => summarizeSession(store, name).catch((error: unknown) => damagedSummary(name, error)));
    return summaries.filter((summary): summary is SessionSummary => summary !== undefined);
  }
  // A session whose records did not change since it was last summarised (its content signature, read without opening
  // its database) is listed from the cache: a listing opens only the sessions that changed.
  const cached = await cache.load();
  const entries: Record<string, ListingEntry> = {};
  let changed = false;
  const summaries = await mapWithLimit(listed, LISTING_CONCURRENCY, async (name) => {
    const before = await cache.signature(name);
    const hit = cached[name];
    // An entry written before listings carried usage is refreshed once.
    if (hit && hit.signature === before && ((hit.value as SessionSummary | undefined)?.usage !== undefined || (hit.value as SessionSummary | undefined)?.damaged !== undefined)) {
      entries[name] = hit;
      return hit.value as SessionSummary | undefined;
    }
    changed = true;
    const summary = await summarizeSession(store, name).catch((error: unknown) => damagedSummary(name, error));
    // Opening a database may flush its log into a table (a new signature, the same records): cache the summary under
    // the signature after it only when a second look finds the records as they were (no append meanwhile).
    const after = await cache.signature(name);
    if (summary && !summary.damaged && after !== 'missing') {
      const again = after === before ? summary : await summarizeSession(store, name).catch(() => undefined);
      if (again && again.head === summary.head && (await cache.signature(name)) === after) entries[name] = { signature: after, value: again };
    }
    return summary;
  });
  if (changed || Object.keys(cached).length !== Object.keys(entries).length) await cache.save(entries).catch(() => undefined);
  return summaries.filter((summary): summary is SessionSummary => summary !== undefined);
};

/**
 * The sessions of the store, oldest first, page by page (the workspace's memory stream is not a session). A store
 * with a status index (`streamPage`) answers a status filter from it; otherwise every stream's tail is read. One
 * damaged session never hides the others: it is listed (last) as `damaged` with its error code.
 */
export async function* sessionPages(store: EventStore, options: ListSessionsOptions = {}): AsyncGenerator<SessionSummary[]> {
  if (store.streamPage) {
    for (let after: StreamInfo | undefined; options.status !== 'queued'; ) {
      const page = await store.streamPage({ ...(options.status === undefined ? {} : { status: options.status }), ...(after ? { after } : {}), limit: PAGE });
      const summaries = await summarizeAll(store, page.map((info) => info.stream));
      if (summaries.length > 0) yield summaries;
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }
    yield* queuedPages(store, options);
    return;
  }
  // Names only (no database opened), so a stream that cannot be opened is still listed.
  const names = store.streamNames ? await store.streamNames() : (await store.streams()).map((info) => info.stream);
  await store.release?.(memoryStream);
  const rank = (summary: SessionSummary) => (summary.damaged ? 1 : 0);
  const summaries = (await summarizeAll(store, names)).filter((summary) => options.status === undefined || summary.status === options.status);
  yield summaries.sort((left, right) => rank(left) - rank(right) || left.createdAt - right.createdAt || (left.id < right.id ? -1 : 1));
}

/** A queue entry whose session has no record yet, as `rein sessions` lists it: `queued`, `active` (claimed a moment ago), or `failed` with the reason no worker could start it. */
const queuedSummary = (entry: WaitingEntry): SessionSummary => ({
  id: entry.session,
  status: entry.state === 'queued' ? 'queued' : entry.state === 'failed' ? 'failed' : 'active',
  head: 0,
  createdAt: entry.enqueuedAt,
  task: entry.task,
  ...(entry.failure === undefined ? {} : { reason: entry.failure }),
});

/**
 * The summary of a session its store's queue holds but no worker has written a record of yet (PostgreSQL); undefined
 * when there is no queue or no such entry.
 */
export const summarizeQueued = async (store: EventStore, id: string): Promise<SessionSummary | undefined> => {
  if (!store.capabilities.fencing) return undefined;
  const queue = (await import('../../stores/postgres/postgres-session-queue.js')).sessionQueueOf(store);
  const entry = await queue?.entry(id);
  if (!entry || entry.state === 'done' || entry.state === 'parked') return undefined;
  const spec = entry.spec as { task?: unknown; submittedAt?: unknown };
  return queuedSummary({ session: id, state: entry.state, task: typeof spec.task === 'string' ? spec.task : '', enqueuedAt: typeof spec.submittedAt === 'number' ? spec.submittedAt : 0, ...(entry.failure === undefined ? {} : { failure: entry.failure }) });
};

/**
 * The sessions a store's queue holds that have no record yet (PostgreSQL): `queued`, `active` when a worker claimed
 * one a moment ago, or `failed` when no worker could start it. They come after the sessions that have records.
 */
async function* queuedPages(store: EventStore, options: ListSessionsOptions): AsyncGenerator<SessionSummary[]> {
  if (options.status !== undefined && options.status !== 'queued' && options.status !== 'active' && options.status !== 'failed') return;
  if (!store.capabilities.fencing) return;
  const queue = (await import('../../stores/postgres/postgres-session-queue.js')).sessionQueueOf(store);
  if (!queue) return;
  for (let after: WaitingEntry | undefined; ; ) {
    const page = await queue.waiting({ ...(after ? { after } : {}), limit: PAGE });
    const summaries = page
      .map(queuedSummary)
      .filter((summary) => options.status === undefined || summary.status === options.status);
    if (summaries.length > 0) yield summaries;
    if (page.length < PAGE) return;
    after = page[page.length - 1];
  }
}

/**
 * The sessions in the store (in `status`, when given), oldest first; damaged ones are listed (last) with their error.
 * `limit` makes it a page and `after` (a session id, the last one of the previous page) the cursor
 * (`SESSION_NOT_FOUND` when no session of the listing has that id): a page's sessions are summarised once and then listed from the store's listing cache (LevelDB) until their records change.
 */
export const listSessions = async (store: EventStore, options: ListSessionsOptions = {}): Promise<SessionSummary[]> => {
  if (options.limit !== undefined && !(Number.isInteger(options.limit) && options.limit > 0)) throw new ReinError('USAGE', `listSessions({ limit }) must be a whole number ≥ 1, got ${JSON.stringify(options.limit)}`);
  const all: SessionSummary[] = [];
  let skipping = options.after !== undefined;
  for await (const page of sessionPages(store, options.status === undefined ? {} : { status: options.status })) {
    for (const summary of page) {
      if (skipping) {
        skipping = summary.id !== options.after;
        continue;
      }
      all.push(summary);
      if (options.limit !== undefined && all.length >= options.limit) return all;
    }
  }
  // A cursor that names no session of this listing would silently list nothing: say so instead.
  if (skipping) throw new ReinError('SESSION_NOT_FOUND', `no session ${JSON.stringify(options.after)} in this listing${options.status === undefined ? '' : ` (status ${options.status})`}: \`after\` must be the last id of the previous page`);
  return all;
};
