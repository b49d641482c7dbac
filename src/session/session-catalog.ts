import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore, StreamInfo } from '../../stores/event-store.js';
import { statusFromNewest } from '../host/session-status.js';
import { isReservedStreamName, memoryStream } from '../memory/memory-stream.js';

/** One line of `rein sessions`. `status` is a final outcome, `awaiting-approval`, `interrupted`, `idle`, or `active` for a session that has not ended. */
export interface SessionSummary {
  id: string;
  status: string;
  head: number;
  createdAt: number;
  task: string;
  forkedFrom?: { stream: string; seq: number };
}

const statusOf = (tail: readonly RecordEnvelope[]): string => statusFromNewest(tail) ?? 'active';

/** Summarise one session from its first record and the last few (cheap: two bounded reads). */
export const summarizeSession = async (store: EventStore, id: string): Promise<SessionSummary | undefined> => {
  if (isReservedStreamName(id)) return undefined;
  const info = await store.info(id);
  if (!info || info.head === 0) return undefined;
  const [first] = await store.read(id, { limit: 1 });
  const tail = await store.read(id, { reverse: true, limit: 64 });
  const task = first?.type === 'session.created' ? String((first.data as { task?: unknown }).task ?? '') : '';
  return { id, status: statusOf(tail), head: info.head, createdAt: info.createdAt, task, ...(info.forkedFrom ? { forkedFrom: info.forkedFrom } : {}) };
};

/** Options of `listSessions`. */
export interface ListSessionsOptions {
  /** Only sessions in this status (`active`, `awaiting-approval`, `completed`, …). */
  status?: string;
}

const PAGE = 200;

const summarizeAll = async (store: EventStore, streams: readonly StreamInfo[]): Promise<SessionSummary[]> => {
  const summaries = await Promise.all(streams.filter((stream) => !isReservedStreamName(stream.stream)).map((stream) => summarizeSession(store, stream.stream)));
  return summaries.filter((summary): summary is SessionSummary => summary !== undefined);
};

/**
 * The sessions of the store, oldest first, page by page (the workspace's memory stream is not a session). A store
 * with a status index (`streamPage`) answers a status filter from it; otherwise every stream's tail is read.
 */
export async function* sessionPages(store: EventStore, options: ListSessionsOptions = {}): AsyncGenerator<SessionSummary[]> {
  if (store.streamPage) {
    for (let after: StreamInfo | undefined; ; ) {
      const page = await store.streamPage({ ...(options.status === undefined ? {} : { status: options.status }), ...(after ? { after } : {}), limit: PAGE });
      const summaries = await summarizeAll(store, page);
      if (summaries.length > 0) yield summaries;
      if (page.length < PAGE) return;
      after = page[page.length - 1];
    }
  }
  const streams = await store.streams();
  await store.release?.(memoryStream);
  const summaries = (await summarizeAll(store, streams)).filter((summary) => options.status === undefined || summary.status === options.status);
  yield summaries.sort((left, right) => left.createdAt - right.createdAt || (left.id < right.id ? -1 : 1));
}

/** Every session in the store (in `status`, when given), oldest first. */
export const listSessions = async (store: EventStore, options: ListSessionsOptions = {}): Promise<SessionSummary[]> => {
  const all: SessionSummary[] = [];
  for await (const page of sessionPages(store, options)) all.push(...page);
  return all;
};
