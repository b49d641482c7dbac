import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { rootPath } from '../host/root-path.js';
import { forkSession } from './fork-session.js';
import { sessionEndedIn } from '../host/step-record.js';

/** The model call a provider failure ended a session on: its `model.failed` record, and the error it names. */
export interface ProviderFailure {
  sessionId: string;
  /** The root agent's `model.failed` whose step ended the session `failed`. */
  failed: RecordEnvelope;
  effectId: string;
  code: string;
  message: string;
}

/**
 * The provider failure a session ended on, when it did: its newest root `session.ended` is `failed` and the record its
 * step answered is the root agent's `model.failed` (a provider outage, a wrong key, exhausted retries — any provider
 * error after the retries it allows). Undefined for every other session, ended or not. Reads only the log's tail.
 */
export const providerFailureOf = async (store: EventStore, sessionId: string): Promise<ProviderFailure | undefined> => {
  const newestFirst = await store.read(sessionId, { reverse: true, limit: 256 });
  // The root's `session.ended` travels in its step's step record (or stands alone in a log written before them).
  const endedAt = newestFirst.findIndex((record) => sessionEndedIn(record, rootPath) !== undefined);
  const ended = endedAt < 0 ? undefined : sessionEndedIn(newestFirst[endedAt]!, rootPath);
  if (!ended || (ended.data as { status?: unknown }).status !== 'failed') return undefined;
  // The input whose step ended the session: the newest input-like record before `session.ended` that is not derived.
  const failed = newestFirst.slice(endedAt + 1).find((record) => record.actor === rootPath && (record.type === 'model.failed' || record.type === 'model.responded' || record.type === 'tool.settled' || record.type === 'effect.failed' || record.type === 'session.cancelled'));
  if (failed?.type !== 'model.failed') return undefined;
  const data = failed.data as { effectId: string; error: { code: string; message: string } };
  return { sessionId, failed, effectId: data.effectId, code: data.error.code, message: data.error.message };
};

/**
 * A new attempt at the model call a provider failure ended `failure.sessionId` on: a fork of the session at the last
 * durable step before the failure (the call's request is in it, its failure is not), recorded with the reason on its
 * `session.forked`. Resuming the fork runs the call again — with the provider the session was created with unless the
 * resume says otherwise — and the session goes on from there. The failed session itself is untouched: it stays `failed`.
 * Returns the fork's id.
 */
export const forkForRetry = (store: EventStore, failure: ProviderFailure, options: { newSessionId?: string; clock?: () => number } = {}): Promise<string> =>
  forkSession(store, failure.sessionId, failure.failed.seq - 1, { ...options, reason: `a new attempt at the model call ${failure.effectId}, which failed: ${failure.code}: ${failure.message}` });
