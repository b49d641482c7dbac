import type { RecordEnvelope } from '../../models/envelope.js';
import type { ContextProjected } from '../../models/context.records.js';
import { contextCounts } from '../../models/context-counts.js';
import type { EffectFailed, EffectRequested } from '../../models/effect.records.js';
import type { ModelAttempted, ModelFailed, ModelResponded } from '../../models/model.records.js';
import type { SessionCreated, SessionEnded } from '../../models/session.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { ShellClass } from '../../models/permission.records.js';
import type { HookDecided } from '../../models/hook.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { prepend } from './persistent-list.js';
import { foldEntries } from '../host/step-record.js';
import { initialStatusState, nextStatusState } from '../host/session-status.js';
import type { Projection } from './projection.js';
import { applyDelegationRecord, delegationRecords } from './trace-delegation.js';
import { applyToTurn, byCall, ref, updateAction, withTurn } from './trace-links.js';
import { noteTypes } from './trace-notes.js';
import type { TraceAction, TraceAttempt, TraceTurn, TraceVerification, TraceView } from './trace-view-types.js';

export type { TraceAction, TraceAttempt, TraceChild, TraceContext, TraceDelegation, TraceNote, TraceRef, TraceTurn, TraceVerification, TraceView } from './trace-view-types.js';

const applyEffectRequested = (view: TraceView, record: RecordEnvelope): TraceView => {
  const data = record.data as EffectRequested;
  if (data.kind === 'callModel') {
    const previous = view.open[record.actor];
    const turn: TraceTurn = { actor: record.actor, turn: Number(data.args.turn), effectId: data.effectId, requested: ref(record), contexts: [], attempts: [], actions: [] };
    return { ...withTurn(view, turn), closed: previous ? prepend(view.closed, previous) : view.closed };
  }
  if (data.kind !== 'executeTool') return view;
  const turn = view.open[record.actor];
  if (!turn) return { ...view, unlinked: view.unlinked + 1 };
  // After a person answers an approval the call is requested again (same call id, a new effect carrying the
  // answer): it continues the call's action.
  const callId = String(data.args.callId);
  const index = turn.actions.findIndex((action) => action.callId === callId);
  if (index >= 0) {
    const answer = data.args.approval as { approvalId?: unknown; decision?: unknown } | undefined;
    const actions = turn.actions.slice();
    if (answer) {
      const { permission: asked, ...previous } = turn.actions[index]!;
      actions[index] = { ...previous, effectId: data.effectId, approval: { ...(asked ? { asked } : {}), answered: { ...ref(record), approvalId: String(answer.approvalId ?? ''), decision: String(answer.decision ?? 'unknown') } } };
    } else actions[index] = { ...turn.actions[index]!, effectId: data.effectId };
    return withTurn(view, { ...turn, actions });
  }
  const action: TraceAction = {
    callId: String(data.args.callId),
    effectId: data.effectId,
    name: String(data.args.name),
    arguments: (data.args.arguments ?? {}) as Record<string, unknown>,
    requested: { ...ref(record), ...(record.cause ? { cause: record.cause } : {}) },
  };
  return withTurn(view, { ...turn, actions: [...turn.actions, action] });
};

/**
 * The trace projection. Per record it touches the current turn of one actor (bounded by the calls of one turn)
 * and prepends to persistent lists, so its cost does not grow with the session. Linking uses the log's own ids:
 * `context.projected`, `model.responded` / `model.failed` are caused by their turn's `effect.requested`; tool
 * records share their call's `corr`; `effect.failed` names its effect. A `delegate_task` call collects its
 * delegation's records (same `corr`): validation, acceptance, each child (whose own turns carry its actor path),
 * escalations, outcomes, and the join — which is the call's result.
 */
export const traceProjection: Projection<TraceView> = {
  name: 'trace',
  initial: () => ({ seq: 0, tools: [], users: undefined, closed: undefined, open: {}, verifications: undefined, notes: undefined, unlinked: 0, status: initialStatusState }),
  apply(view, record) {
    // A step record is read as the records it stands for (transitions aside: only the status reads them).
    const applied = foldEntries(view, record, applyTraceRecord, notTransition);
    const status = nextStatusState(view.status, record);
    return status === applied.status ? applied : { ...applied, status };
  },
};

const notTransition = (type: string): boolean => type !== 'actor.transitioned';

const applyTraceRecord = (view: TraceView, record: RecordEnvelope): TraceView => {
  const data = record.data as Record<string, unknown>;
  if (delegationRecords.has(record.type)) return applyDelegationRecord(view, record);
  switch (record.type) {
    case 'session.created': {
      const created = record.data as SessionCreated;
      // The stream is the session: a fork's copied `session.created` still names its parent.
      return { ...view, sessionId: record.stream, task: created.task, workspace: created.workspace, tools: created.tools };
    }
    case 'user.message':
      return { ...view, users: prepend(view.users, { ...ref(record), actor: record.actor, text: String(data.text) }) };
    case 'effect.requested':
      return applyEffectRequested(view, record);
    case 'context.projected': {
      const projected = record.data as ContextProjected;
      return applyToTurn(view, record, (turn) => ({
        ...turn,
        contexts: [...turn.contexts, { ...ref(record), attempt: projected.attempt, input: projected.input, estimatedTokens: projected.estimatedTokens, phase: projected.phase, ...contextCounts(projected) }],
      }));
    }
    case 'model.attempted': {
      const attempted = record.data as ModelAttempted;
      const entry: TraceAttempt = {
        ...ref(record),
        attempt: attempted.attempt,
        provider: attempted.provider,
        ...(attempted.model ? { model: attempted.model } : {}),
        outcome: attempted.outcome,
        ...(attempted.errorCode ? { errorCode: attempted.errorCode } : {}),
        decision: attempted.decision,
        ...(attempted.fallbackTo ? { fallbackTo: attempted.fallbackTo.model ? `${attempted.fallbackTo.provider}/${attempted.fallbackTo.model}` : attempted.fallbackTo.provider } : {}),
      };
      return applyToTurn(view, record, (turn) => ({ ...turn, attempts: [...turn.attempts, entry] }));
    }
    case 'model.responded': {
      const reply = record.data as ModelResponded;
      return applyToTurn(view, record, (turn) => ({ ...turn, response: { ...ref(record), text: reply.text, toolCalls: reply.toolCalls.length, stopReason: reply.stopReason, ...(reply.continuation ? { continuation: reply.continuation } : {}) } }));
    }
    case 'model.failed': {
      const failure = record.data as ModelFailed;
      return applyToTurn(view, record, (turn) => ({ ...turn, failure: { ...ref(record), type: 'model.failed', code: failure.error.code, message: failure.error.message } }));
    }
    case 'effect.failed': {
      const failure = record.data as EffectFailed;
      const turn = view.open[record.actor];
      if (turn?.effectId === failure.effectId) return withTurn(view, { ...turn, failure: { ...ref(record), type: 'effect.failed', code: failure.error.code, message: failure.error.message } });
      return updateAction(view, record, (action) => action.effectId === failure.effectId, (action) => ({ ...action, failed: { ...ref(record), code: failure.error.code, message: failure.error.message } }));
    }
    case 'permission.decided':
      return updateAction(view, record, byCall(record), (action) => ({ ...action, permission: { ...ref(record), decision: String(data.decision ?? data.outcome ?? 'unknown'), ...(typeof data.reason === 'string' ? { reason: data.reason } : {}), ...(Array.isArray(data.classes) ? { classes: data.classes as ShellClass[] } : {}) } }));
    case 'hook.decided': {
      const decided = record.data as HookDecided;
      if (!decided.callId) return view;
      const entry = { ...ref(record), point: decided.point, decision: decided.decision, ...(decided.reason ? { reason: decided.reason } : {}), ...(decided.decidedBy ? { by: decided.decidedBy } : {}) };
      return updateAction(view, record, byCall(record), (action) => ({ ...action, hooks: [...(action.hooks ?? []), entry] }));
    }
    case 'tool.started':
      return updateAction(view, record, byCall(record), (action) => ({ ...action, started: ref(record) }));
    case 'tool.settled': {
      const settled = record.data as ToolSettled;
      return updateAction(view, record, byCall(record), (action) => ({
        ...action,
        settled: {
          ...ref(record),
          status: settled.status,
          observation: settled.observation,
          ...(settled.errorCode ? { errorCode: settled.errorCode } : {}),
          ...(settled.truncated ? { truncated: settled.truncated } : {}),
          ...(settled.execution ? { execution: settled.execution } : {}),
          ...(settled.denial ? { denial: settled.denial } : {}),
        },
      }));
    }
    case 'verification.recorded': {
      const verified = record.data as VerificationRecorded;
      const entry: TraceVerification = { ...ref(record), actor: record.actor, name: verified.name, status: verified.status, summary: verified.summary, ...(verified.callId ? { callId: verified.callId } : {}), ...(verified.command ? { command: verified.command } : {}), ...(verified.artifact ? { artifact: verified.artifact } : {}), ...(verified.exitCode !== undefined ? { exitCode: verified.exitCode } : {}), ...(verified.durationMs !== undefined ? { durationMs: verified.durationMs } : {}) };
      const next = { ...view, verifications: prepend(view.verifications, entry) };
      if (!verified.callId) return next;
      return updateAction(next, record, (action) => action.callId === verified.callId, (action) => ({ ...action, verification: entry }));
    }
    case 'session.ended': {
      if (record.actor !== 'root') return view;
      const ended = record.data as SessionEnded;
      return { ...view, ended: { ...ref(record), status: ended.status, ...(ended.reason ? { reason: ended.reason } : {}), ...(ended.unresolved ? { unresolved: ended.unresolved } : {}), ...(ended.caveats ? { caveats: ended.caveats } : {}), ...('output' in ended ? { output: ended.output } : {}), ...(ended.outputErrors ? { outputErrors: ended.outputErrors } : {}) } };
    }
    default: {
      const describe = noteTypes[record.type];
      if (!describe) return view;
      const callId = record.type === 'command.ended' && typeof data.callId === 'string' ? { callId: data.callId } : {};
      return { ...view, notes: prepend(view.notes, { ...ref(record), type: record.type, actor: record.actor, text: describe(data), ...callId }) };
    }
  }
};
