import type { RecordEnvelope } from '../../models/envelope.js';
import { callIdOf } from './call-id.js';
import type { TraceAction, TraceRef, TraceTurn, TraceView } from './trace-view-types.js';

/*
 * How the trace view links a record to what it belongs to: its place in the log, its call (`corr`), the open turn of
 * its actor, and the action of a call in that turn. A record that names nothing the view knows counts as unlinked.
 */

/** The record's place in the log, to cite it as evidence. */
export const ref = (record: RecordEnvelope): TraceRef => ({ seq: record.seq, id: record.id });

/** The view with `turn` as its actor's open turn. */
export const withTurn = (view: TraceView, turn: TraceTurn): TraceView => ({ ...view, open: { ...view.open, [turn.actor]: turn } });

/** Change the first action of the record's actor's open turn that `match`es; with no such action the record is unlinked. */
export const updateAction = (view: TraceView, record: RecordEnvelope, match: (action: TraceAction) => boolean, change: (action: TraceAction) => TraceAction): TraceView => {
  const turn = view.open[record.actor];
  const index = turn ? turn.actions.findIndex(match) : -1;
  if (!turn || index < 0) return { ...view, unlinked: view.unlinked + 1 };
  const actions = turn.actions.slice();
  actions[index] = change(actions[index]!);
  return withTurn(view, { ...turn, actions });
};

/** Matches the action of the record's call. */
export const byCall = (record: RecordEnvelope) => {
  const callId = callIdOf(record);
  return (action: TraceAction) => action.callId === callId;
};

/**
 * Change the open turn of the record's actor when the record is about that turn's model call (its `effectId`, or —
 * for a record without one — its `cause` is the turn's request); else it is unlinked.
 */
export const applyToTurn = (view: TraceView, record: RecordEnvelope, change: (turn: TraceTurn) => TraceTurn | undefined): TraceView => {
  const turn = view.open[record.actor];
  const effectId = (record.data as { effectId?: unknown } | undefined)?.effectId;
  const linked = turn !== undefined && (typeof effectId === 'string' ? turn.effectId === effectId : turn.requested.id === record.cause);
  const next = linked ? change(turn) : undefined;
  return next ? withTurn(view, next) : { ...view, unlinked: view.unlinked + 1 };
};
