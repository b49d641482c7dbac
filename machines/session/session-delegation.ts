import type { AnyActorRef } from 'xstate';
import type { DelegationInput } from '../delegation.machine.js';
import { poolOf, shareBudgets } from '../delegation/budget-share.js';
import type { DelegationDoneEvent, DelegationNotice, OutstandingEffect, SessionContext, SessionEvent } from '../session.contract.js';
import type { JoinOutput } from '../delegation/join-output.js';
import { remainingBudgets } from './session-budget.js';

/*
 * The session machine's side of delegation (machines/session.machine.ts): which delegation a finished actor was,
 * what starting one holds back for its children, what its join charges to the agent, and telling the delegation a
 * child answers to about its approvals. Pure functions of the machine's context; the machine's actions enqueue what
 * they return.
 */

type GuardArgs = { context: SessionContext; event: SessionEvent };

/** The outstanding `delegate_task` call whose delegation actor just decided its join, as `[effectId, effect]`. */
export const delegationDoneOf = (context: SessionContext, event: SessionEvent): [string, OutstandingEffect & { delegation: string }] | undefined => {
  if (!event.type.startsWith('xstate.done.actor.')) return undefined;
  const output = (event as Partial<DelegationDoneEvent>).output;
  if (output?.kind !== 'delegation.join') return undefined;
  const entry = Object.entries(context.outstanding).find(([, effect]) => effect.delegation !== undefined && event.type === `xstate.done.actor.${effect.delegation}` && effect.callId === output.callId);
  return entry as [string, OutstandingEffect & { delegation: string }] | undefined;
};

/**
 * Tell the delegation actor a child answers to about its approvals (found by path in the actor system; a machine
 * running without one — model checking — tells nobody).
 */
export const notify = (system: { get(systemId: string): AnyActorRef | undefined }, context: SessionContext, notice: DelegationNotice, sendTo: (to: AnyActorRef, event: DelegationNotice & { taskId: string }) => void): void => {
  const delegation = context.child ? system.get(context.child.delegation) : undefined;
  if (delegation && context.child) sendTo(delegation, { ...notice, taskId: context.child.taskId });
};

/**
 * Starting the delegation of an accepted `delegate_task` plan: its actor's path (`<path>/delegation-<n>`) and input,
 * and the context update — the call stays outstanding until the join, holding the children's share of what is left.
 */
export const delegationStartOf = (context: SessionContext, event: Extract<SessionEvent, { type: 'delegation.accepted' }>): { path: string; update: Partial<SessionContext>; input: DelegationInput } => {
  const path = `${context.path}/delegation-${event.effectId.slice(event.effectId.lastIndexOf(':e') + 2)}`;
  // The children share what is left (the delegation splits it the same way); it is held for them until the join.
  const ceiling = remainingBudgets(context);
  const reserved = poolOf(shareBudgets(event.plan.tasks.map((task) => task.budgets), ceiling));
  return {
    path,
    update: {
      outstanding: { ...context.outstanding, [event.effectId]: { kind: 'executeTool', callId: event.callId, delegation: path, reserved } },
      usage: { ...context.usage, elapsedMs: Math.max(context.usage.elapsedMs, event.elapsedMs) },
    },
    input: { path, sessionId: context.sessionId, parent: context.path, callId: event.callId, plan: event.plan, ceiling, startedAtMs: event.elapsedMs },
  };
};

/**
 * A decided join, when `event` is one: the delegation actor to stop, its output, and the context update — the call is
 * settled, and what the children spent is charged to this agent (their tokens to its usage, their turns and tool calls
 * to `delegated`), their held shares released.
 */
export const delegationJoinOf = (context: SessionContext, event: SessionEvent): { delegation: string; output: JoinOutput; update: Partial<SessionContext> } | undefined => {
  const found = delegationDoneOf(context, event);
  if (!found) return undefined;
  const [effectId, effect] = found;
  const output = (event as DelegationDoneEvent).output;
  const { [effectId]: _joined, ...outstanding } = context.outstanding;
  return {
    delegation: effect.delegation,
    output,
    update: {
      outstanding,
      // The join happened no earlier than the last deadline it saw: a child's deadline is charged to this agent's wall time.
      usage: { ...context.usage, inputTokens: context.usage.inputTokens + output.usage.inputTokens, outputTokens: context.usage.outputTokens + output.usage.outputTokens, elapsedMs: Math.max(context.usage.elapsedMs, output.elapsedMs) },
      tally: { ...context.tally, delegated: { turns: context.tally.delegated.turns + output.usage.turns, toolCalls: context.tally.delegated.toolCalls + output.usage.toolCalls } },
    },
  };
};

/** The session machine's delegation guards. */
export const delegationGuards = {
  isAcceptedDelegation: ({ context, event }: GuardArgs) =>
    event.type === 'delegation.accepted' &&
    context.outstanding[event.effectId]?.kind === 'executeTool' &&
    context.outstanding[event.effectId]?.callId === event.callId &&
    context.outstanding[event.effectId]?.delegation === undefined,
  isDelegationDone: ({ context, event }: GuardArgs) => delegationDoneOf(context, event) !== undefined,
  isLastOutstandingDelegation: ({ context, event }: GuardArgs) => {
    const found = delegationDoneOf(context, event);
    return found !== undefined && Object.keys(context.outstanding).length === 1;
  },
};

/** The session was cancelled (`cancelDelegations`): each running delegation and the cancel it is sent, so it stops its children and records why. */
export const delegationCancelsOf = (context: SessionContext, event: SessionEvent): Array<{ delegation: string; cancel: { type: 'delegation.cancel'; reason: string } }> => {
  if (event.type !== 'session.cancelled') return [];
  return Object.values(context.outstanding).flatMap((effect) => (effect.delegation ? [{ delegation: effect.delegation, cancel: { type: 'delegation.cancel' as const, reason: event.reason } }] : []));
};
