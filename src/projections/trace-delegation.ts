import type { RecordEnvelope } from '../../models/envelope.js';
import type { DelegationCompleted, DelegationFailed, DelegationJoined, DelegationPermissionEscalated, DelegationStarted, DelegationValidated } from '../../models/delegation.records.js';
import { prepend } from './persistent-list.js';
import { ref, withTurn } from './trace-links.js';
import type { TraceAction, TraceChild, TraceDelegation, TraceTurn, TraceView } from './trace-view-types.js';

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

/** Apply one of the `delegationRecords` to the `delegate_task` action it belongs to (same `corr`). */
export const applyDelegationRecord = (view: TraceView, record: RecordEnvelope): TraceView => {
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

/** The record types `applyDelegationRecord` takes. */
export const delegationRecords = new Set(['delegation.validated', 'delegation.accepted', 'delegation.started', 'delegation.permission-escalated', 'delegation.completed', 'delegation.failed', 'delegation.joined']);
