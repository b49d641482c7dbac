import type { PermissionInput } from '../permission.machine.js';
import type { ApprovalDoneEvent, DelegationNotice, RequestEffectParams, SessionContext, SessionEvent } from '../session.contract.js';
import { effectIdOf } from './session-budget.js';

/*
 * The session machine's approvals (machines/session.machine.ts): a call that needs approval settles its effect with
 * `approval.requested`, which opens a permission actor (`<path>/approval-<n>`); when that actor finishes, the call is
 * requested again as a fresh `executeTool` effect carrying the answer. Pure functions of the machine's context and
 * event; the machine's actions enqueue what they return.
 */

/** A finished permission actor's done event. */
export const isApprovalDone = (event: SessionEvent): event is ApprovalDoneEvent =>
  event.type.startsWith('xstate.done.actor.') && typeof (event as Partial<ApprovalDoneEvent>).output?.approvalId === 'string';

/**
 * Opening an approval (`openApproval`): the context update (the call's effect is settled, the approval pending), the
 * permission actor's input, and the notice for the delegation a child answers to.
 */
export const approvalOpenOf = (
  context: SessionContext,
  event: Extract<SessionEvent, { type: 'approval.requested' }>,
): { update: Partial<SessionContext>; input: PermissionInput; notice: DelegationNotice } => {
  const { [event.effectId]: _settled, ...outstanding } = context.outstanding;
  const { type: _type, elapsedMs, arguments: args, ...question } = event;
  return {
    update: {
      outstanding,
      approvals: { ...context.approvals, [event.approvalId]: { callId: event.callId, name: event.tool, arguments: args } },
      usage: { ...context.usage, elapsedMs: Math.max(context.usage.elapsedMs, elapsedMs) },
    },
    input: { path: event.approvalId, question },
    notice: { type: 'child.escalated', approvalId: event.approvalId, tool: event.tool, summary: event.summary, reason: event.reason },
  };
};

/**
 * Closing a pending approval (`closeApproval`), when `event` finishes one: the permission actor to stop, the context
 * update, the fresh `executeTool` request carrying the answer, and the notice for the delegation a child answers to.
 */
export const approvalCloseOf = (
  context: SessionContext,
  event: SessionEvent,
): { approvalId: string; update: Partial<SessionContext>; request: RequestEffectParams; notice: DelegationNotice } | undefined => {
  if (!isApprovalDone(event)) return undefined;
  const approvalId = event.output.approvalId;
  const pending = context.approvals[approvalId];
  if (!pending) return undefined;
  const { [approvalId]: _closed, ...approvals } = context.approvals;
  const effectId = effectIdOf(context);
  return {
    approvalId,
    update: { approvals, nextEffect: context.nextEffect + 1, outstanding: { ...context.outstanding, [effectId]: { kind: 'executeTool', callId: pending.callId } } },
    request: { effectId, kind: 'executeTool', args: { callId: pending.callId, name: pending.name, arguments: pending.arguments, approval: { ...event.output } } },
    notice: { type: 'child.resumed', approvalId },
  };
};
