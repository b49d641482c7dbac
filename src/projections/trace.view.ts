import type { RecordEnvelope } from '../../models/envelope.js';
import type { ContextProjected } from '../../models/context.records.js';
import type { EffectFailed, EffectRequested } from '../../models/effect.records.js';
import type { ModelAttempted, ModelFailed, ModelResponded } from '../../models/model.records.js';
import type { SessionCaveat, SessionCreated, SessionEnded, UnresolvedFindings } from '../../models/session.records.js';
import type { CommandExecution, ToolSettled, Truncation } from '../../models/tool.records.js';
import type { Denial, ShellClass } from '../../models/permission.records.js';
import type { HookDecided } from '../../models/hook.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import type { DelegationCompleted, DelegationFailed, DelegationJoined, DelegationPermissionEscalated, DelegationStarted, DelegationValidated } from '../../models/delegation.records.js';
import { prepend, type PersistentList } from './persistent-list.js';
import { initialStatusState, nextStatusState, type SessionStatusState } from '../host/session-status.js';
import type { Projection, ViewState } from './projection.js';

/** Where a record sits in the log: enough to cite it as evidence. */
export interface TraceRef {
  seq: number;
  id: string;
}

export interface TraceContext extends TraceRef {
  attempt: number;
  input: string;
  estimatedTokens: number;
  phase: string;
  excluded: number;
  compacted: number;
}

export interface TraceVerification extends TraceRef {
  actor: string;
  name: string;
  status: 'passed' | 'failed' | 'inconclusive';
  summary: string;
  callId?: string;
  command?: string;
  artifact?: string;
  /** The run's exit code (`null`: a signal ended it); absent on a record that carries no exit (a host's own). */
  exitCode?: number | null;
  durationMs?: number;
}

/** One child agent of a delegation, linked to its parent's call by `corr` and to its own turns by its actor path. */
export interface TraceChild {
  taskId: string;
  role: string;
  actor: string;
  contextMode: string;
  tools: readonly string[];
  started: TraceRef;
  status: 'running' | 'awaiting-approval' | 'completed' | 'failed' | 'cancelled';
  escalations: number;
  ended?: TraceRef;
  reportStatus?: string;
  failureClass?: string;
  reason?: string;
}

/** What a `delegate_task` call became: its validation, the delegation actor, its children and the join. */
export interface TraceDelegation {
  validated?: TraceRef & { ok: boolean; failureClass?: string; reason?: string };
  accepted?: TraceRef;
  path?: string;
  children: readonly TraceChild[];
  joined?: TraceRef & { policy: string; outcome: string; conflicts: number };
}

/** One tool call, linked by its `corr` (the call id): request → permission → start → result → verification. */
export interface TraceAction {
  callId: string;
  effectId: string;
  name: string;
  arguments: Record<string, unknown>;
  requested: TraceRef & { cause?: string };
  /** The permission decision; `classes`: what the shell classifier found in a command (`read-only`, `write`, …). */
  permission?: TraceRef & { decision: string; reason?: string; classes?: readonly ShellClass[] };
  /**
   * A call whose permission asked a person: the `ask` decision, and the request re-issued with the answer (a new
   * effect for the same call, which then has its own permission decision). One action, not two rows.
   */
  approval?: { asked?: TraceRef & { decision: string; reason?: string }; answered: TraceRef & { approvalId: string; decision: string } };
  /** Hook and guardrail decisions about this call, in log order (`preToolUse`, `guardrail.input`, `guardrail.output`, `postToolUse`). */
  hooks?: ReadonlyArray<TraceRef & { point: string; decision: string; reason?: string; by?: string }>;
  started?: TraceRef;
  settled?: TraceRef & { status: 'ok' | 'error'; errorCode?: string; observation: string; truncated?: Truncation; execution?: CommandExecution; denial?: Denial };
  verification?: TraceVerification;
  failed?: TraceRef & { code: string; message: string };
  delegation?: TraceDelegation;
}

/** One attempt of a model call: which provider took it, how it ended and what came next (retry, fallback…). */
export interface TraceAttempt extends TraceRef {
  attempt: number;
  provider: string;
  model?: string;
  outcome: 'ok' | 'error';
  errorCode?: string;
  decision: string;
  fallbackTo?: string;
}

/** One model call of one actor, linked by `cause`: the context it got, its attempts, its reply or failure, and its tool calls. */
export interface TraceTurn {
  actor: string;
  turn: number;
  effectId: string;
  requested: TraceRef;
  contexts: TraceContext[];
  attempts: TraceAttempt[];
  /** The reply; `continuation`: a `stop` hook answered this final reply with "continue" (its reason, and which hook). */
  response?: TraceRef & { text: string; toolCalls: number; stopReason: string; continuation?: { reason: string; by?: string } };
  failure?: TraceRef & { type: 'model.failed' | 'effect.failed'; code: string; message: string };
  actions: TraceAction[];
}

/** A record worth a line in the timeline that belongs to no turn (resume, interruption, cancellation, fork). */
export interface TraceNote extends TraceRef {
  type: string;
  actor: string;
  text: string;
}

/** The trace view: the session's facts linked into turns and tool calls (DESIGN's responsibility chain). */
export interface TraceView extends ViewState {
  sessionId?: string;
  task?: string;
  workspace?: string;
  tools: readonly string[];
  users: PersistentList<TraceRef & { actor: string; text: string }> | undefined;
  /** Closed turns, newest first; each actor's current turn is in `open`. */
  closed: PersistentList<TraceTurn> | undefined;
  open: Readonly<Record<string, TraceTurn>>;
  verifications: PersistentList<TraceVerification> | undefined;
  notes: PersistentList<TraceNote> | undefined;
  ended?: TraceRef & { status: string; reason?: string; unresolved?: UnresolvedFindings; caveats?: SessionCaveat[] };
  /** Records whose `cause` / `corr` named nothing the view knew: a broken link in the chain. */
  unlinked: number;
  /** What the log says about the session's status (as `rein sessions` lists it). */
  status: SessionStatusState;
}

const ref = (record: RecordEnvelope): TraceRef => ({ seq: record.seq, id: record.id });

const corrOf = (record: RecordEnvelope): string | undefined => record.corr ?? ((record.data as { callId?: unknown }).callId as string | undefined);

const withTurn = (view: TraceView, turn: TraceTurn): TraceView => ({ ...view, open: { ...view.open, [turn.actor]: turn } });

const updateAction = (view: TraceView, record: RecordEnvelope, match: (action: TraceAction) => boolean, change: (action: TraceAction) => TraceAction): TraceView => {
  const turn = view.open[record.actor];
  const index = turn ? turn.actions.findIndex(match) : -1;
  if (!turn || index < 0) return { ...view, unlinked: view.unlinked + 1 };
  const actions = turn.actions.slice();
  actions[index] = change(actions[index]!);
  return withTurn(view, { ...turn, actions });
};

const byCall = (record: RecordEnvelope) => {
  const callId = corrOf(record);
  return (action: TraceAction) => action.callId === callId;
};

/**
 * How a background command ended, as a person reads it: `exited (exit 1) after 2.0 s`, `stopped at its timeout of
 * 600000 ms (signal SIGTERM) after 600.0 s`, `stopped by rein at the session's end (signal SIGKILL) after 1.1 s`.
 */
export const backgroundEndText = (data: Record<string, unknown>): string => {
  const stoppedBy: Record<string, string> = { 'session-end': "at the session's end", interrupted: 'when the session was interrupted', cancelled: 'when its call was cancelled', paused: 'when rein let go of the paused session' };
  const how = data.ended === 'timeout' ? `stopped at its timeout of ${String(data.timeoutMs)} ms` : data.ended === 'stopped' ? `stopped by rein ${stoppedBy[String(data.stoppedBy)] ?? ''}`.trimEnd() : 'exited';
  const status = data.exitCode === null || data.exitCode === undefined ? `signal ${typeof data.signal === 'string' ? data.signal : 'unknown'}` : `exit ${String(data.exitCode)}`;
  return `${how} (${status}) after ${(Number(data.durationMs) / 1000).toFixed(1)} s`;
};

const noteTypes: Record<string, (data: Record<string, unknown>) => string> = {
  'command.ended': (data) => `background command of ${String(data.callId)} ${backgroundEndText(data)}`,
  'session.cancelled': (data) => `cancelled: ${String(data.reason)}`,
  'session.resumed': (data) => `resumed at #${String(data.fromSeq)}${Array.isArray(data.inDoubt) && data.inDoubt.length > 0 ? `; in doubt: ${data.inDoubt.join(', ')}` : ''}${typeof data.strayProcessesKilled === 'number' ? `; killed ${data.strayProcessesKilled} process(es) an earlier run left` : ''}`,
  'session.interrupted': (data) => `interrupted: ${String(data.reason)}`,
  'session.forked': (data) => `forked from ${String(data.parent)} at #${String(data.atSeq)}`,
  'effect.resolved': (data) => `in-doubt ${String(data.effectId)} → ${String(data.resolution)} (${String(data.reason)})`,
  'snapshot.rejected': (data) => `snapshot rejected: ${String(data.reason)}`,
};

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
 * Change the `delegate_task` action `callId` of agent `parent`: in its open turn, or — when the parent already
 * requested its next model call in the same step — in its most recently closed turn (a bounded look back).
 */
const updateDelegation = (view: TraceView, parent: string, callId: string, change: (delegation: TraceDelegation, action: TraceAction) => Partial<TraceAction>): TraceView => {
  const apply = (turn: TraceTurn): TraceTurn | undefined => {
    const index = turn.actions.findIndex((action) => action.callId === callId);
    if (index < 0) return undefined;
    const actions = turn.actions.slice();
    const action = actions[index]!;
    actions[index] = { ...action, ...change(action.delegation ?? { children: [] }, action) };
    return { ...turn, actions };
  };
  const open = view.open[parent];
  const changed = open ? apply(open) : undefined;
  if (changed) return withTurn(view, changed);
  const skipped: TraceTurn[] = [];
  let node = view.closed;
  for (let steps = 0; node && steps < 64; steps++, node = node.rest) {
    const turn = node.head.actor === parent ? apply(node.head) : undefined;
    if (!turn) {
      skipped.push(node.head);
      continue;
    }
    let closed = prepend(node.rest, turn);
    for (let index = skipped.length - 1; index >= 0; index--) closed = prepend(closed, skipped[index]!);
    return { ...view, closed };
  }
  return { ...view, unlinked: view.unlinked + 1 };
};

const parentOfDelegation = (delegation: string): string => delegation.slice(0, delegation.lastIndexOf('/'));

const changeChild = (delegation: TraceDelegation, taskId: string, change: (child: TraceChild) => TraceChild): Partial<TraceAction> => ({
  delegation: { ...delegation, children: delegation.children.map((child) => (child.taskId === taskId ? change(child) : child)) },
});

const applyDelegationRecord = (view: TraceView, record: RecordEnvelope): TraceView => {
  const callId = record.corr ?? String((record.data as { callId?: unknown }).callId);
  switch (record.type) {
    case 'delegation.validated': {
      const data = record.data as DelegationValidated;
      return updateDelegation(view, record.actor, callId, (delegation) => ({ delegation: { ...delegation, validated: { ...ref(record), ok: data.ok, ...(data.failureClass ? { failureClass: data.failureClass } : {}), ...(data.reason ? { reason: data.reason } : {}) } } }));
    }
    case 'delegation.accepted':
      return updateDelegation(view, record.actor, callId, (delegation) => ({ delegation: { ...delegation, accepted: ref(record) } }));
    case 'delegation.started': {
      const data = record.data as DelegationStarted;
      const child: TraceChild = { taskId: data.taskId, role: data.task.role, actor: data.child, contextMode: data.task.contextMode, tools: data.task.tools, started: ref(record), status: 'running', escalations: 0 };
      return updateDelegation(view, data.parent, callId, (delegation) => ({ delegation: { ...delegation, path: record.actor, children: [...delegation.children, child] } }));
    }
    case 'delegation.permission-escalated': {
      const data = record.data as DelegationPermissionEscalated;
      return updateDelegation(view, parentOfDelegation(record.actor), callId, (delegation) => changeChild(delegation, data.taskId, (child) => ({ ...child, status: 'awaiting-approval', escalations: child.escalations + 1 })));
    }
    case 'delegation.completed': {
      const data = record.data as DelegationCompleted;
      return updateDelegation(view, parentOfDelegation(record.actor), callId, (delegation) => changeChild(delegation, data.taskId, (child) => ({ ...child, status: 'completed', ended: ref(record), reportStatus: data.reportStatus })));
    }
    case 'delegation.failed': {
      const data = record.data as DelegationFailed;
      return updateDelegation(view, parentOfDelegation(record.actor), callId, (delegation) => changeChild(delegation, data.taskId, (child) => ({ ...child, status: data.cancelled ? 'cancelled' : 'failed', ended: ref(record), failureClass: data.failureClass, reason: data.reason })));
    }
    default: {
      const data = record.data as DelegationJoined;
      // The join is the call's terminal result.
      return updateDelegation(view, data.parent, callId, (delegation) => ({
        delegation: { ...delegation, joined: { ...ref(record), policy: data.policy, outcome: data.outcome, conflicts: data.conflicts.length } },
        settled: { ...ref(record), status: 'ok', observation: data.observation },
      }));
    }
  }
};

const delegationRecords = new Set(['delegation.validated', 'delegation.accepted', 'delegation.started', 'delegation.permission-escalated', 'delegation.completed', 'delegation.failed', 'delegation.joined']);

const applyToTurn = (view: TraceView, record: RecordEnvelope, change: (turn: TraceTurn) => TraceTurn | undefined): TraceView => {
  const turn = view.open[record.actor];
  const next = turn && turn.requested.id === record.cause ? change(turn) : undefined;
  return next ? withTurn(view, next) : { ...view, unlinked: view.unlinked + 1 };
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
    const applied = applyTraceRecord(view, record);
    const status = nextStatusState(view.status, record);
    return status === applied.status ? applied : { ...applied, status };
  },
};

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
        contexts: [...turn.contexts, { ...ref(record), attempt: projected.attempt, input: projected.input, estimatedTokens: projected.estimatedTokens, phase: projected.phase, excluded: projected.excluded.reduce((sum, entry) => sum + entry.count, 0), compacted: projected.compacted.length }],
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
      return { ...view, ended: { ...ref(record), status: ended.status, ...(ended.reason ? { reason: ended.reason } : {}), ...(ended.unresolved ? { unresolved: ended.unresolved } : {}), ...(ended.caveats ? { caveats: ended.caveats } : {}) } };
    }
    default: {
      const describe = noteTypes[record.type];
      if (!describe) return view;
      return { ...view, notes: prepend(view.notes, { ...ref(record), type: record.type, actor: record.actor, text: describe(data) }) };
    }
  }
};
