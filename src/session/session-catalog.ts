import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { rootPath } from '../host/root-path.js';
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

const statusOf = (tail: readonly RecordEnvelope[]): string => {
  for (const record of tail) {
    if (record.actor !== rootPath) continue;
    if (record.type === 'session.ended') return (record.data as { status: string }).status;
    if (record.type === 'session.interrupted') return 'interrupted';
    if (record.type === 'actor.transitioned') {
      const to = (record.data as { to: unknown }).to;
      if (to === 'idle') return 'idle';
      return typeof to === 'object' && to !== null && (to as { running?: unknown }).running === 'awaitingApproval' ? 'awaiting-approval' : 'active';
    }
  }
  return 'active';
};

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

/** Every session in the store, oldest first (the workspace's memory stream is not a session). */
export const listSessions = async (store: EventStore): Promise<SessionSummary[]> => {
  const streams = (await store.streams()).filter((stream) => !isReservedStreamName(stream.stream));
  await store.release?.(memoryStream);
  const summaries = await Promise.all(streams.map((stream) => summarizeSession(store, stream.stream)));
  return summaries.filter((summary): summary is SessionSummary => summary !== undefined).sort((left, right) => left.createdAt - right.createdAt || (left.id < right.id ? -1 : 1));
};
