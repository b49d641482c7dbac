import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { newest } from '../projections/persistent-list.js';
import { statusOfState } from '../host/session-status.js';
import { traceProjection, type TraceView } from '../projections/trace.view.js';
import { backgroundEndsOf, lastChange, turnsOf } from './trace-evidence.js';
import type { TraceOutcome } from './trace-types.js';

/**
 * The outcome of a session as its trace view shows it — the one `rein trace` prints, `rein sessions` lists beside
 * the status, the run summary names and the exit code follows. Only a passing verification after the last change,
 * with no fail-closed finding or caveat left standing, is `succeeded`; a failed last verification is `failed` (the
 * session may still have `completed`: the lifecycle status and the outcome are different things); a completion
 * without a verification that speaks for the code is `unverified`. A session that has not ended says where it stands.
 */
export const outcomeOfTraceView = (view: TraceView): TraceOutcome => {
  if (!view.ended) {
    const status = statusOfState(view.status);
    // A pause for the cost budget is an interruption the trace names as such (its status says what it waits for).
    if (status === 'awaiting-budget') return 'interrupted';
    return status === 'forked' || status === 'interrupted' || status === 'awaiting-approval' || status === 'awaiting-confirmation' || status === 'idle' ? status : 'running';
  }
  if (view.ended.status !== 'completed') return view.ended.status as TraceOutcome;
  const lastVerification = newest(view.verifications, 1)[0];
  if (!lastVerification) return 'unverified';
  if (lastVerification.status === 'failed') return 'failed';
  // A run that ran no test verified nothing.
  if (lastVerification.status === 'inconclusive') return 'unverified';
  // A completion over a blocked turn is not MutationReady: whatever the tests say, it never counts as succeeded.
  if (view.ended.unresolved) return 'unverified';
  // Nor does one whose last reply was cut at the output limit, or that a stop hook still objected to.
  if (view.ended.caveats) return 'unverified';
  return lastVerification.seq < lastChange(turnsOf(view), backgroundEndsOf(view)).seq ? 'unverified' : 'succeeded';
};

/**
 * Fold a session's records (oldest first, from seq 1) into its trace view, as `rebuildView` does (without loading
 * rxjs: `rein sessions` stays light). Pure; reads nothing.
 */
const traceViewOf = (records: Iterable<RecordEnvelope>): TraceView => {
  let view = traceProjection.initial();
  for (const record of records) {
    if (record.seq !== view.seq + 1) continue;
    const next = traceProjection.apply(view, record);
    view = next.seq === record.seq ? next : { ...next, seq: record.seq };
  }
  return view;
};

/**
 * A session's outcome from its whole log (oldest first, from seq 1): see `outcomeOfTraceView`. Pure: the same
 * records always give the same outcome, in every frontend (the CLI, the viewer, a host app).
 */
export const sessionOutcome = (records: Iterable<RecordEnvelope>): TraceOutcome => outcomeOfTraceView(traceViewOf(records));

/**
 * The outcome of a session in a store, for a listing: a session that ended other than `completed`, or has not ended,
 * is decided by `status` (what its tail says) and nothing more is read; a `completed` one is decided by its
 * verifications, so its whole log is read once (a cost proportional to its length, paid only by completed sessions).
 */
export const readSessionOutcome = async (store: EventStore, sessionId: string, status: string): Promise<TraceOutcome | undefined> => {
  if (status === 'completed') return sessionOutcome(await store.read(sessionId));
  return listedOutcomes[status];
};

/** The outcome a status that is not `completed` stands for (`active` is `running`). */
const listedOutcomes: Readonly<Record<string, TraceOutcome>> = {
  failed: 'failed',
  cancelled: 'cancelled',
  'budget-exhausted': 'budget-exhausted',
  forked: 'forked',
  interrupted: 'interrupted',
  'awaiting-budget': 'interrupted',
  'awaiting-approval': 'awaiting-approval',
  'awaiting-confirmation': 'awaiting-confirmation',
  idle: 'idle',
  active: 'running',
};
