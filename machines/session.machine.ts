import { and, assign, enqueueActions, not, setup } from 'xstate';
import { approvalIdOf, type ApprovalRequested } from '../models/permission.records.js';
import { permissionMachine, type ApprovalOutcome } from './permission.machine.js';
import type { Budgets, Usage } from '../models/budgets.js';
import { emptyUsage } from '../models/budgets.js';
import type { EffectFailed, EffectKind } from '../models/effect.records.js';
import type { ModelFailed, ModelResponded } from '../models/model.records.js';
import type { SessionCancelled, SessionOutcome, UserMessage } from '../models/session.records.js';
import type { ToolSettled } from '../models/tool.records.js';

/** Bumped whenever a change to this machine would make old snapshots restore into the wrong state. */
export const sessionMachineVersion = '2';

/** A tool call waiting for a person's answer; re-requested as a fresh `executeTool` effect once answered. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** An effect the session has requested and not yet seen settle. */
export interface OutstandingEffect {
  kind: EffectKind;
  callId?: string;
}

export interface SessionInput {
  path: string;
  sessionId: string;
  budgets: Budgets;
}

export interface SessionContext {
  path: string;
  sessionId: string;
  budgets: Budgets;
  usage: Usage;
  /** Counter behind deterministic effect ids (`<path>:e<n>`): ids are never random. */
  nextEffect: number;
  outstanding: Record<string, OutstandingEffect>;
  /** The effect id of the model call the session is waiting for, if any. */
  awaitingModel: string | null;
  /** Calls waiting for approval, by approval id (= the permission actor's path and id). */
  approvals: Record<string, PendingApproval>;
  endReason: string | null;
}

/** The event a permission actor's parent receives when it reaches a final state. */
export type ApprovalDoneEvent = { type: `xstate.done.actor.${string}`; output: ApprovalOutcome };

/** Machine events are input records: `{ type, ...data }`. */
export type SessionEvent =
  | ({ type: 'user.message' } & UserMessage)
  | ({ type: 'model.responded' } & ModelResponded)
  | ({ type: 'model.failed' } & ModelFailed)
  | ({ type: 'tool.settled' } & ToolSettled)
  | ({ type: 'effect.failed' } & EffectFailed)
  | ({ type: 'approval.requested' } & ApprovalRequested)
  | ApprovalDoneEvent
  | ({ type: 'session.cancelled' } & SessionCancelled);

/** Params of the `requestEffect` action: the host turns each into an `effect.requested` record. */
export interface RequestEffectParams {
  effectId: string;
  kind: EffectKind;
  args: Record<string, unknown>;
}

/** Params of the `emitRecord` action: the host turns each into a derived record of that type. */
export interface EmitRecordParams {
  type: string;
  data: Record<string, unknown>;
}

const effectIdOf = (context: SessionContext): string => `${context.path}:e${context.nextEffect}`;

const isApprovalDone = (event: SessionEvent): event is ApprovalDoneEvent =>
  event.type.startsWith('xstate.done.actor.') && typeof (event as Partial<ApprovalDoneEvent>).output?.approvalId === 'string';

const tokensUsed = (usage: Usage): number => usage.inputTokens + usage.outputTokens;

const ended = (status: SessionOutcome) =>
  ({ type: 'emitRecord', params: ({ context }: { context: SessionContext }) => ({ type: 'session.ended', data: context.endReason ? { status, reason: context.endReason } : { status } }) }) as const;

/**
 * The agent lifecycle (DESIGN §4): idle → running (awaiting model ⇄ running tools ⇄ awaiting approval) →
 * completed · failed · cancelled · budget-exhausted. A call that needs approval settles its effect with
 * `approval.requested`, which spawns a permission actor (`<path>/approval-<n>`); when that actor finishes, the
 * call is requested again as a fresh `executeTool` effect carrying the answer. Pure: it requests effects through `requestEffect` and learns their outcomes from
 * input events; the runtime executes them only after the step's records are durable.
 */
export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: {
    permission: permissionMachine,
  },
  actions: {
    /** Observed by the host through inspection; deliberately does nothing here (machines perform no I/O). */
    requestEffect: (_: unknown, _params: RequestEffectParams) => {},
    /** Observed by the host through inspection; deliberately does nothing here. */
    emitRecord: (_: unknown, _params: EmitRecordParams) => {},
    requestModelCall: enqueueActions(({ context, enqueue }) => {
      const effectId = effectIdOf(context);
      const turn = context.usage.turns + 1;
      enqueue.assign({
        nextEffect: context.nextEffect + 1,
        awaitingModel: effectId,
        outstanding: { ...context.outstanding, [effectId]: { kind: 'callModel' } },
        usage: { ...context.usage, turns: turn },
      });
      enqueue({ type: 'requestEffect', params: { effectId, kind: 'callModel', args: { turn } } });
    }),
    settleModelCall: assign(({ context, event }) => {
      if (event.type !== 'model.responded' && event.type !== 'model.failed') return {};
      const { [event.effectId]: _settled, ...outstanding } = context.outstanding;
      const usage = event.type === 'model.responded'
        ? { ...context.usage, inputTokens: context.usage.inputTokens + event.usage.inputTokens, outputTokens: context.usage.outputTokens + event.usage.outputTokens }
        : context.usage;
      return { outstanding, awaitingModel: null, usage: { ...usage, elapsedMs: Math.max(usage.elapsedMs, event.elapsedMs) } };
    }),
    requestToolCalls: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'model.responded') return;
      let next = context.nextEffect;
      const outstanding = { ...context.outstanding };
      for (const call of event.toolCalls) {
        const effectId = `${context.path}:e${next++}`;
        outstanding[effectId] = { kind: 'executeTool', callId: call.callId };
        enqueue({ type: 'requestEffect', params: { effectId, kind: 'executeTool', args: { callId: call.callId, name: call.name, arguments: call.arguments } } });
      }
      enqueue.assign({ nextEffect: next, outstanding, usage: { ...context.usage, toolCalls: context.usage.toolCalls + event.toolCalls.length } });
    }),
    settleToolCall: assign(({ context, event }) => {
      if (event.type !== 'tool.settled') return {};
      const { [event.effectId]: _settled, ...outstanding } = context.outstanding;
      return { outstanding, usage: { ...context.usage, elapsedMs: Math.max(context.usage.elapsedMs, event.elapsedMs) } };
    }),
    openApproval: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'approval.requested') return;
      const { [event.effectId]: _settled, ...outstanding } = context.outstanding;
      const { type: _type, elapsedMs, arguments: args, ...question } = event;
      enqueue.assign({
        outstanding,
        approvals: { ...context.approvals, [event.approvalId]: { callId: event.callId, name: event.tool, arguments: args } },
        usage: { ...context.usage, elapsedMs: Math.max(context.usage.elapsedMs, elapsedMs) },
      });
      enqueue.spawnChild('permission', { id: event.approvalId, systemId: event.approvalId, input: { path: event.approvalId, question } });
    }),
    closeApproval: enqueueActions(({ context, event, enqueue }) => {
      if (!isApprovalDone(event)) return;
      const approvalId = event.output.approvalId;
      const pending = context.approvals[approvalId];
      if (!pending) return;
      const { [approvalId]: _closed, ...approvals } = context.approvals;
      const effectId = effectIdOf(context);
      enqueue.stopChild(approvalId);
      enqueue.assign({ approvals, nextEffect: context.nextEffect + 1, outstanding: { ...context.outstanding, [effectId]: { kind: 'executeTool', callId: pending.callId } } });
      enqueue({ type: 'requestEffect', params: { effectId, kind: 'executeTool', args: { callId: pending.callId, name: pending.name, arguments: pending.arguments, approval: { ...event.output } } } });
    }),
    noteEventReason: assign(({ event }) => {
      if (event.type === 'model.failed') return { endReason: `model call failed: ${event.error.code}: ${event.error.message}` };
      if (event.type === 'effect.failed') return { endReason: `effect ${event.effectId} failed: ${event.error.code}: ${event.error.message}` };
      if (event.type === 'session.cancelled') return { endReason: event.reason };
      return {};
    }),
  },
  guards: {
    isAwaitedModelCall: ({ context, event }) =>
      (event.type === 'model.responded' || event.type === 'model.failed') && event.effectId === context.awaitingModel,
    isOutstandingEffect: ({ context, event }) => 'effectId' in event && Object.hasOwn(context.outstanding, event.effectId),
    isOutstandingTool: ({ context, event }) =>
      event.type === 'tool.settled' && context.outstanding[event.effectId]?.kind === 'executeTool',
    isLastOutstanding: ({ context, event }) =>
      'effectId' in event && Object.keys(context.outstanding).length === 1 && Object.hasOwn(context.outstanding, event.effectId),
    isOutstandingApprovalRequest: ({ context, event }) =>
      event.type === 'approval.requested' &&
      context.outstanding[event.effectId]?.kind === 'executeTool' &&
      context.outstanding[event.effectId]?.callId === event.callId &&
      event.approvalId === approvalIdOf(context.path, event.effectId) &&
      !Object.hasOwn(context.approvals, event.approvalId),
    isPendingApprovalOutcome: ({ context, event }) =>
      isApprovalDone(event) && Object.hasOwn(context.approvals, event.output.approvalId) && event.type === `xstate.done.actor.${event.output.approvalId}`,
    hasPendingApprovals: ({ context }) => Object.keys(context.approvals).length > 0,
    hasToolCalls: ({ event }) => event.type === 'model.responded' && event.toolCalls.length > 0,
    /** The provider paused a long turn (`pause_turn`): the model continues it in another call. */
    isPausedTurn: ({ event }) => event.type === 'model.responded' && event.stopReason === 'pause_turn',
    toolCallBudgetLeft: ({ context, event }) =>
      event.type === 'model.responded' && context.usage.toolCalls + event.toolCalls.length <= context.budgets.maxToolCalls,
    tokenBudgetLeft: ({ context, event }) =>
      event.type !== 'model.responded' || tokensUsed(context.usage) + event.usage.inputTokens + event.usage.outputTokens <= context.budgets.maxTokens,
    turnBudgetLeft: ({ context }) => context.usage.turns < context.budgets.maxTurns,
    wallTimeLeft: ({ context }) => context.usage.elapsedMs < context.budgets.maxWallTimeMs,
    nothingElseOutstanding: ({ context, event }) =>
      Object.keys(context.outstanding).every((effectId) => 'effectId' in event && effectId === event.effectId),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    path: input.path,
    sessionId: input.sessionId,
    budgets: input.budgets,
    usage: { ...emptyUsage },
    nextEffect: 1,
    outstanding: {},
    awaitingModel: null,
    approvals: {},
    endReason: null,
  }),
  initial: 'idle',
  on: {
    'session.cancelled': { target: '.cancelled', actions: 'noteEventReason' },
  },
  states: {
    idle: {
      on: { 'user.message': { target: 'running' } },
    },
    running: {
      initial: 'nextTurn',
      on: {
        'effect.failed': { guard: 'isOutstandingEffect', target: 'failed', actions: 'noteEventReason' },
      },
      states: {
        nextTurn: {
          always: [
            { guard: not('turnBudgetLeft'), target: '#session.budgetExhausted', actions: assign({ endReason: 'turn budget exhausted' }) },
            { guard: not('wallTimeLeft'), target: '#session.budgetExhausted', actions: assign({ endReason: 'wall-time budget exhausted' }) },
            { target: 'awaitingModel' },
          ],
        },
        awaitingModel: {
          entry: 'requestModelCall',
          on: {
            'model.responded': [
              {
                guard: and(['isAwaitedModelCall', not('tokenBudgetLeft')]),
                target: '#session.budgetExhausted',
                actions: ['settleModelCall', assign({ endReason: 'token budget exhausted' })],
              },
              {
                guard: and(['isAwaitedModelCall', 'hasToolCalls', not('toolCallBudgetLeft')]),
                target: '#session.budgetExhausted',
                actions: ['settleModelCall', assign({ endReason: 'tool-call budget exhausted' })],
              },
              { guard: and(['isAwaitedModelCall', 'hasToolCalls']), target: 'runningTools', actions: ['settleModelCall', 'requestToolCalls'] },
              { guard: and(['isAwaitedModelCall', 'isPausedTurn']), target: 'nextTurn', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding']), target: '#session.completed', actions: 'settleModelCall' },
            ],
            'model.failed': { guard: 'isAwaitedModelCall', target: '#session.failed', actions: ['settleModelCall', 'noteEventReason'] },
          },
        },
        runningTools: {
          on: {
            'tool.settled': [
              { guard: and(['isOutstandingTool', 'isLastOutstanding', not('hasPendingApprovals')]), target: 'nextTurn', actions: 'settleToolCall' },
              { guard: and(['isOutstandingTool', 'isLastOutstanding']), target: 'awaitingApproval', actions: 'settleToolCall' },
              { guard: 'isOutstandingTool', actions: 'settleToolCall' },
            ],
            'approval.requested': [
              { guard: and(['isOutstandingApprovalRequest', 'isLastOutstanding']), target: 'awaitingApproval', actions: 'openApproval' },
              { guard: 'isOutstandingApprovalRequest', actions: 'openApproval' },
            ],
            'xstate.done.actor.*': { guard: 'isPendingApprovalOutcome', actions: 'closeApproval' },
          },
        },
        awaitingApproval: {
          on: {
            'xstate.done.actor.*': { guard: 'isPendingApprovalOutcome', target: 'runningTools', actions: 'closeApproval' },
          },
        },
      },
    },
    completed: { type: 'final', entry: ended('completed') },
    failed: { type: 'final', entry: ended('failed') },
    cancelled: { type: 'final', entry: ended('cancelled') },
    budgetExhausted: { type: 'final', entry: ended('budget-exhausted') },
  },
});

export type SessionMachine = typeof sessionMachine;
