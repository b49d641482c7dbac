import type { EventStore } from '../../stores/event-store.js';
import type { PostgresEventStore } from '../../stores/postgres/postgres-event-store.js';
import { PostgresSessionQueue } from '../../stores/postgres/postgres-session-queue.js';
import { ReinError } from '../host/host-errors.js';
import { QueuedSession, type QueuedSessionInput } from './queued-session.js';

/** The queue of `store`, or `QUEUE_UNSUPPORTED` when the store has none (only the PostgreSQL store queues sessions). */
export const queueOf = (store: EventStore): PostgresSessionQueue => {
  if (!store.capabilities.fencing || typeof (store as Partial<PostgresEventStore>).listen !== 'function') {
    throw new ReinError('QUEUE_UNSUPPORTED', 'only a PostgreSQL store (openPostgresEventStore) queues sessions for workers');
  }
  return new PostgresSessionQueue(store as PostgresEventStore);
};

/**
 * Queue a session for `rein worker` and resolve with its id. The spec is validated first (`INPUT_INVALID`); it never
 * holds a key. `STORE_STREAM_EXISTS` when the id is taken.
 */
export const submitSession = async (store: EventStore, spec: Omit<QueuedSessionInput, 'submittedAt'> & { submittedAt?: number }): Promise<string> => {
  const parsed = QueuedSession.safeParse({ ...spec, submittedAt: spec.submittedAt ?? Date.now() });
  if (!parsed.success) throw new ReinError('INPUT_INVALID', `invalid session to queue: ${parsed.error.message}`, { cause: parsed.error });
  await queueOf(store).enqueue(parsed.data.sessionId, parsed.data);
  return parsed.data.sessionId;
};
