import { createMachine, enqueueActions, setup, type AnyStateMachine } from 'xstate';
import type { Budgets } from '../models/budgets.js';
import type { ChildUsage, DelegatedTask, DelegationPlan, FailureClass, JoinConflict, JoinPolicy, TimerFired } from '../models/delegation.records.js';
import { renderJoinObservation } from './delegation/join-observation.js';
import { decideJoin, findConflicts, type ChildState } from './delegation/join-policy.js';
import { shareBudgets, spentSoFar } from './delegation/budget-share.js';
import type { JoinOutput } from './delegation/join-output.js';
import type { AgentOutput, SessionInput } from './session.contract.js';
import { lazyValue } from '../models/lazy-schema.js';

export type { JoinOutput } from './delegation/join-output.js';

/** Bumped whenever a change would make old snapshots of this machine restore into the wrong state. */
export const delegationMachineVersion = '4';

export interface DelegationInput {
  /** This actor's path (`<parent>/delegation-<n>`), also its systemId. */
  path: string;
  sessionId: string;
  /** The delegating agent's path. */
  parent: string;
  /** The `delegate_task` call this delegation serves: every record it emits carries it as `corr`. */
  callId: string;
  plan: DelegationPlan;
  /**
   * The parent's remaining budgets at this moment: the one pool its children share (`shareBudgets`) — together they
   * never get more, and the parent holds their shares until the join.
   */
  ceiling: Budgets;
  /** Session time (ms since creation) when the plan was accepted: deadlines count from here. */
  startedAtMs: number;
}

export interface DelegationContext {
  path: string;
  sessionId: string;
  parent: string;
  callId: string;
  join: JoinPolicy;
  observationLimit: number;
  ceiling: Budgets;
  startedAtMs: number;
  /** The latest session time seen (`startedAtMs`, then each deadline timer that fired): the join's `elapsedMs`. */
  elapsedMs: number;
  /** Tasks not spawned yet (emptied by the entry action). */
  pending: DelegatedTask[];
  /** The children in task order (an array: copied per event in microseconds, whatever the fan-out). */
  children: ChildState[];
  /** Task id → index in `children`; written once, never copied. */
  slots: Record<string, number>;
  /**
   * The children before this index have ended and their actors are released (stopped): ended children are released
   * in task order, each once every child before it has ended (see `childActorId`).
   */
  released: number;
  nextEffect: number;
  outcome: JoinOutput['outcome'] | null;
  observation: string | null;
}

/** A child agent finished (the session machine's output). */
export type ChildDoneEvent = { type: `xstate.done.actor.${string}`; output: AgentOutput };

export type DelegationEvent =
  | ChildDoneEvent
  | ({ type: 'timer.fired' } & TimerFired)
  | { type: 'child.escalated'; taskId: string; approvalId: string; tool: string; summary: string; reason: string }
  | { type: 'child.resumed'; taskId: string; approvalId: string }
  | { type: 'delegation.cancel'; reason: string };

const escalationOptions = [
  'answer the approval (the prompt, session.approve, or rein resume --approve): the child continues once answered',
  'deny it with feedback: the child stays in scope and reports what it could not do',
  'let the parent re-plan: the join reports the child as blocked or failed and the parent decides',
];

const emptyUsage: ChildUsage = { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 };

const active = (child: ChildState | undefined): child is ChildState => child !== undefined && (child.status === 'running' || child.status === 'awaiting-approval');

const childAt = (context: DelegationContext, taskId: string): ChildState | undefined =>
  Object.hasOwn(context.slots, taskId) ? context.children[context.slots[taskId]!] : undefined;

/**
 * The id of a child's actor among this delegation's children: its task's index (`'0'`, `'1'`, …), while its path
 * stays its systemId and its name in every record (the host names a child's done event by its path). XState copies
 * an actor's children map on every spawn and stop; an index keeps that map an array-like object whose copy without
 * one entry stays cheap — with path keys a thousand stops cost seconds (the copy of a map that lost a key is slow).
 * It stays cheap only while the keys are removed from the front: entries removed in any other order leave holes that
 * turn the map into a dictionary, and 1,000 children ending in scheduling order cost ~0.35 s of copies again. So an
 * ended child is released once every child before it has ended (`released`); one that ends earlier keeps its finished
 * actor (it runs nothing, its effects are dropped when it ends) until then.
 */
export const childActorId = (context: Pick<DelegationContext, 'slots'>, taskId: string): string => String(context.slots[taskId]);

const childDone = (context: DelegationContext, event: DelegationEvent): ChildState | undefined => {
  if (!event.type.startsWith('xstate.done.actor.')) return undefined;
  const output = (event as Partial<ChildDoneEvent>).output;
  if (output?.kind !== 'agent') return undefined;
  const child = childAt(context, output.path.slice(output.path.lastIndexOf('/') + 1));
  return active(child) && child.path === output.path && event.type === `xstate.done.actor.${childActorId(context, child.taskId)}` ? child : undefined;
};

/**
 * Stop the ended children from `context.released` up to the first one still running (`children` is the list after
 * this event) and return the new `released`. A running child that is stopped out of order (its deadline passed) is
 * stopped at once by the caller; reaching it here stops nothing more (its actor is gone).
 */
const releaseEnded = (context: DelegationContext, children: readonly ChildState[], stop: (id: string) => void): number => {
  let released = context.released;
  while (released < children.length && !active(children[released])) stop(String(released++));
  return released;
};

/** The still running child whose deadline timer this is (timers are `<path>:e<n>` for the n-th child). */
const timerOwner = (context: DelegationContext, effectId: string): ChildState | undefined => {
  const child = context.children[Number(effectId.slice(effectId.lastIndexOf(':e') + 2)) - 1];
  return active(child) && child.deadline === effectId ? child : undefined;
};

/** True while the delegation still waits on timer `effectId` (its child runs): the host resumes only those. */
export const awaitsTimer = (context: DelegationContext, effectId: string): boolean => timerOwner(context, effectId) !== undefined;

/**
 * A running child stopped before it ended (the join was decided, its deadline passed), with what it spent so far read
 * from its actor: the parent is charged for it like for a child that ended by itself.
 */
const stoppedChild = (self: { getSnapshot(): { children: Record<string, unknown> } }, context: DelegationContext, child: ChildState, stopped: Pick<ChildState, 'status' | 'failureClass' | 'reason'>): ChildState => {
  const usage = spentSoFar(self.getSnapshot().children[childActorId(context, child.taskId)] as Parameters<typeof spentSoFar>[0]);
  return { ...child, ...stopped, ...(usage ? { usage } : {}) };
};

const withChild = (context: DelegationContext, child: ChildState): ChildState[] => {
  const children = context.children.slice();
  children[context.slots[child.taskId]!] = child;
  return children;
};

/** The outcome of a finished child, judged by what it may merge: a valid report from a MutationReady turn. */
const judge = (child: ChildState, output: AgentOutput): ChildState => {
  const usage = output.usage;
  if (output.status === 'completed' && output.report && output.evidence) {
    return { ...child, status: 'completed', report: output.report, reportStatus: output.report.status as ChildState['reportStatus'], usage };
  }
  const failureClass: FailureClass = output.status === 'completed' ? 'contract' : (output.failureClass ?? 'runtime');
  const reason = output.status === 'completed' ? 'the child ended without a report from a MutationReady turn: nothing is merged' : (output.reason ?? `the child ended ${output.status}`);
  return { ...child, status: 'failed', failureClass, reason, usage };
};

const record = (type: string, data: Record<string, unknown>, corr: string) => ({ type: 'emitRecord' as const, params: { type, data, corr } });

const usageSum = (children: readonly ChildState[]): ChildUsage =>
  children.reduce((sum, child) => ({
    turns: sum.turns + (child.usage?.turns ?? 0),
    toolCalls: sum.toolCalls + (child.usage?.toolCalls ?? 0),
    inputTokens: sum.inputTokens + (child.usage?.inputTokens ?? 0),
    outputTokens: sum.outputTokens + (child.usage?.outputTokens ?? 0),
  }), emptyUsage);

/**
 * Fan-out and join of child agents (DESIGN §4). On entry it spawns one session actor per task (`<path>/<taskId>`,
 * child mode: its objective is its first message), records `delegation.started` and starts a deadline timer per
 * child (effect `startTimer` → input `timer.fired`). It records each child's end (`delegation.completed` only for
 * a valid report from a MutationReady turn, otherwise `delegation.failed` with its class), relays escalations
 * (`delegation.permission-escalated`), and decides the join exactly once by its policy — then stops the children
 * still running and records `delegation.joined` with the observation the parent's call gets. `delegation.cancel`
 * (the parent was cancelled) stops every child. Pure: no clock, deadlines are effects.
 */
export const delegationMachine = lazyValue(() => setup({
  types: { context: {} as DelegationContext, events: {} as DelegationEvent, input: {} as DelegationInput, output: {} as JoinOutput },
  actors: {
    /**
     * The child agent: the session machine, provided at spawn by the session machine that spawns this delegation
     * (`delegationMachine.provide({ actors: { agent } })`), so neither module imports the other. Unprovided it is a
     * stand-in that never ends (model checking provides its own).
     */
    agent: createMachine({ id: 'agent-unprovided' }) as AnyStateMachine,
  },
  actions: {
    /** Observed by the host through inspection; deliberately does nothing here (machines perform no I/O). */
    requestEffect: (_: unknown, _params: { effectId: string; kind: 'startTimer'; args: Record<string, unknown> }) => {},
    /** Observed by the host through inspection; deliberately does nothing here. */
    emitRecord: (_: unknown, _params: { type: string; data: Record<string, unknown>; corr?: string }) => {},
    startChildren: enqueueActions(({ context, enqueue }) => {
      let next = context.nextEffect;
      const children: ChildState[] = [];
      const shares = shareBudgets(context.pending.map((task) => task.budgets), context.ceiling);
      for (const [index, task] of context.pending.entries()) {
        const path = `${context.path}/${task.taskId}`;
        const budgets = shares[index]!;
        const deadline = `${context.path}:e${next++}`;
        const input: SessionInput = {
          path,
          sessionId: context.sessionId,
          budgets,
          mutationPolicyDigest: task.mutationPolicyDigest,
          child: { taskId: task.taskId, role: task.role, delegation: context.path, callId: context.callId, format: task.contract.format, startedAtMs: context.startedAtMs, depth: task.depth },
        };
        children.push({ taskId: task.taskId, role: task.role, path, format: task.contract.format, status: 'running', deadline });
        enqueue(record('delegation.started', { callId: context.callId, taskId: task.taskId, child: path, parent: context.parent, task: { ...task, budgets } }, context.callId));
        enqueue.spawnChild('agent', { id: childActorId(context, task.taskId), systemId: path, input });
        enqueue({ type: 'requestEffect', params: { effectId: deadline, kind: 'startTimer', args: { callId: context.callId, taskId: task.taskId, child: path, deadlineMs: context.startedAtMs + budgets.maxWallTimeMs } } });
      }
      enqueue.assign({ pending: [], children, nextEffect: next });
    }),
    recordChildEnd: enqueueActions(({ context, event, enqueue }) => {
      const child = childDone(context, event);
      if (!child) return;
      const judged = judge(child, (event as ChildDoneEvent).output);
      // Released with the ended children before it, in task order (`childActorId`), not with the rest at the final
      // state. Its timer no longer counts: only a running child's timer does (`awaitsTimer`).
      const children = withChild(context, judged);
      const released = releaseEnded(context, children, (id) => enqueue.stopChild(id));
      enqueue.assign({ children, released });
      const common = { callId: context.callId, taskId: child.taskId, child: child.path };
      if (judged.status === 'completed') {
        const output = (event as ChildDoneEvent).output;
        enqueue(record('delegation.completed', { ...common, reportStatus: judged.reportStatus, report: judged.report, evidence: output.evidence, usage: judged.usage }, context.callId));
      } else {
        enqueue(record('delegation.failed', { ...common, failureClass: judged.failureClass, reason: judged.reason, ...(judged.usage ? { usage: judged.usage } : {}) }, context.callId));
      }
    }),
    expireChild: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'timer.fired') return;
      const child = timerOwner(context, event.effectId);
      if (!child) return;
      const reason = 'the child missed its deadline (wall-time budget) and was stopped';
      // A running child is stopped now, whatever its place; the ended ones after it may be released with it.
      enqueue.stopChild(childActorId(context, child.taskId));
      const children = withChild(context, stoppedChild(self, context, child, { status: 'failed', failureClass: 'runtime', reason }));
      const released = releaseEnded(context, children, (id) => {
        if (id !== childActorId(context, child.taskId)) enqueue.stopChild(id);
      });
      enqueue.assign({ children, released, elapsedMs: Math.max(context.elapsedMs, event.elapsedMs) });
      enqueue(record('delegation.failed', { callId: context.callId, taskId: child.taskId, child: child.path, failureClass: 'runtime', reason }, context.callId));
    }),
    relayEscalation: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'child.escalated') return;
      const child = childAt(context, event.taskId);
      if (!active(child)) return;
      enqueue.assign({ children: withChild(context, { ...child, status: 'awaiting-approval' }) });
      enqueue(record('delegation.permission-escalated', { callId: context.callId, taskId: child.taskId, child: child.path, approvalId: event.approvalId, tool: event.tool, summary: event.summary, reason: event.reason, options: escalationOptions }, context.callId));
    }),
    resumeChild: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'child.resumed') return;
      const child = childAt(context, event.taskId);
      if (child?.status === 'awaiting-approval') enqueue.assign({ children: withChild(context, { ...child, status: 'running' }) });
    }),
    /** Stop every child still running, recording each as cancelled (runtime class), then record the join. */
    closeJoin: enqueueActions(({ context, event, enqueue, self }) => {
      const cancelling = event.type === 'delegation.cancel';
      const decided = cancelling ? 'cancelled' : decideJoin(context.join, context.children);
      if (!decided) return;
      const reason = cancelling ? `cancelled: the parent was cancelled (${event.reason})` : `cancelled: the join (${context.join.policy}) was decided`;
      // Every actor still held is stopped here, in task order: the running children (cancelled) and the ended ones not
      // released yet.
      const list = context.children.map((child, index): ChildState => {
        if (index >= context.released && !active(child)) enqueue.stopChild(String(index));
        if (!active(child)) return child;
        enqueue.stopChild(childActorId(context, child.taskId));
        enqueue(record('delegation.failed', { callId: context.callId, taskId: child.taskId, child: child.path, failureClass: 'runtime', reason, cancelled: true }, context.callId));
        return stoppedChild(self, context, child, { status: 'cancelled', failureClass: 'runtime', reason });
      });
      const conflicts: JoinConflict[] = cancelling ? [] : findConflicts(list);
      const observation = renderJoinObservation({ delegation: context.path, join: context.join, outcome: decided, children: list, conflicts }, context.observationLimit);
      enqueue.assign({ children: list, released: list.length, outcome: decided, observation });
      enqueue(
        record(
          'delegation.joined',
          {
            callId: context.callId,
            parent: context.parent,
            policy: context.join.policy,
            ...(context.join.k === undefined ? {} : { k: context.join.k }),
            outcome: decided,
            children: list.map((child) => ({ taskId: child.taskId, role: child.role, child: child.path, status: child.status === 'completed' ? 'completed' : child.status === 'cancelled' ? 'cancelled' : 'failed', ...(child.reportStatus ? { reportStatus: child.reportStatus } : {}), ...(child.failureClass ? { failureClass: child.failureClass } : {}) })),
            conflicts,
            observation,
          },
          context.callId,
        ),
      );
    }),
  },
  guards: {
    isChildDone: ({ context, event }) => childDone(context, event) !== undefined,
    isPendingTimer: ({ context, event }) => event.type === 'timer.fired' && timerOwner(context, event.effectId) !== undefined,
    joinDecided: ({ context }) => decideJoin(context.join, context.children) !== undefined,
  },
}).createMachine({
  id: 'delegation',
  context: ({ input }) => ({
    path: input.path,
    sessionId: input.sessionId,
    parent: input.parent,
    callId: input.callId,
    join: input.plan.join,
    observationLimit: input.plan.observationLimit,
    ceiling: input.ceiling,
    startedAtMs: input.startedAtMs,
    elapsedMs: input.startedAtMs,
    pending: input.plan.tasks,
    children: [],
    slots: Object.fromEntries(input.plan.tasks.map((task, index) => [task.taskId, index])),
    released: 0,
    nextEffect: 1,
    outcome: null,
    observation: null,
  }),
  initial: 'running',
  states: {
    running: {
      entry: 'startChildren',
      always: { guard: 'joinDecided', target: 'joined', actions: 'closeJoin' },
      on: {
        'xstate.done.actor.*': { guard: 'isChildDone', actions: 'recordChildEnd' },
        'timer.fired': { guard: 'isPendingTimer', actions: 'expireChild' },
        'child.escalated': { actions: 'relayEscalation' },
        'child.resumed': { actions: 'resumeChild' },
        'delegation.cancel': { target: 'cancelled', actions: 'closeJoin' },
      },
    },
    joined: { type: 'final' },
    cancelled: { type: 'final' },
  },
  output: ({ context }) => ({
    kind: 'delegation.join',
    callId: context.callId,
    outcome: context.outcome ?? 'cancelled',
    observation: context.observation ?? '',
    usage: usageSum(context.children),
    elapsedMs: context.elapsedMs,
  }),
}));

export type DelegationMachine = typeof delegationMachine;
