import { and, assign, enqueueActions, not, setup } from 'xstate';
import { approvalIdOf, type ApprovalRequested } from '../models/permission.records.js';
import { permissionMachine, type ApprovalOutcome } from './permission.machine.js';
import { turnMachine, type TurnOutput } from './turn.machine.js';
import type { CallSpec } from '../models/call-spec.js';
import type { UseRow } from '../models/turn.records.js';
import type { Budgets, Usage } from '../models/budgets.js';
import { emptyUsage } from '../models/budgets.js';
import type { EffectFailed, EffectKind } from '../models/effect.records.js';
import type { ModelFailed, ModelResponded } from '../models/model.records.js';
import type { SessionCancelled, SessionOutcome, UserMessage } from '../models/session.records.js';
import type { ToolSettled } from '../models/tool.records.js';

/** Bumped whenever a change to this machine would make old snapshots restore into the wrong state. */
export const sessionMachineVersion = '3';

/** The tools whose results must carry shell boundary evidence. */
export const shellTools: readonly string[] = ['bash'];

/** The claims completing a session requires of the last tool turn's CallSpec. */
export const completionClaims: readonly string[] = ['session.complete'];

/** What the session remembers of its latest tool turn: completing the session rests on it. */
export interface TurnVerdict {
  turnId: string;
  path: string;
  status: TurnOutput['status'] | 'open';
  classes: string[];
}

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
  /** The active instruction-linked mutation policy; a turn's CallSpec must match it for MutationReady. */
  mutationPolicyDigest?: string;
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
  /** The active mutation policy digest (from `session.created`, then `policy.changed`). */
  mutationPolicyDigest: string;
  /** The latest tool turn's typestate verdict; `null` before the first tool turn. */
  lastTurn: TurnVerdict | null;
  endReason: string | null;
}

/** The event a permission actor's parent receives when it reaches a final state. */
export type ApprovalDoneEvent = { type: `xstate.done.actor.${string}`; output: ApprovalOutcome };

/** The event a turn actor's parent receives when the turn reaches `mutationReady` or `blocked`. */
export type TurnDoneEvent = { type: `xstate.done.actor.${string}`; output: TurnOutput };

/** Machine events are input records: `{ type, ...data }`. */
export type SessionEvent =
  | ({ type: 'user.message' } & UserMessage)
  | ({ type: 'model.responded' } & ModelResponded)
  | ({ type: 'model.failed' } & ModelFailed)
  | ({ type: 'tool.settled' } & ToolSettled)
  | ({ type: 'effect.failed' } & EffectFailed)
  | ({ type: 'approval.requested' } & ApprovalRequested)
  | ApprovalDoneEvent
  | TurnDoneEvent
  | { type: 'turn.results-ready'; turnId: string; rows: Array<{ callId: string; errorCode?: string }> }
  | { type: 'policy.changed'; mutationPolicyDigest: string }
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

const isTurnDone = (event: SessionEvent): event is TurnDoneEvent =>
  event.type.startsWith('xstate.done.actor.') && typeof (event as Partial<TurnDoneEvent>).output?.turnId === 'string';

/** Without a recorded CallSpec nothing is allowed: every call is `tool.unknown_or_disallowed` and the turn blocks. */
const missingCallSpec = (callId: string): CallSpec => ({
  callId,
  modelRef: { provider: 'unknown', model: 'unknown' },
  actionMode: 'json',
  executionPattern: 'chain',
  toolChoice: 'auto',
  toolPolicy: { allow: [], schemaDigests: {} },
  toolCatalogDigest: 'none',
  parallelPolicy: { allowed: false, maxBranches: 1, strictOrder: false },
  toolResponseTruncationPolicy: { maxChars: 1, marker: '', artifactRequired: true },
  runtimeSandboxRef: 'none',
  riskTier: 'high',
  mutationPolicyDigest: 'none',
  capabilityClaims: [],
  stopPolicy: { maxTurns: 1, checkpoints: [] },
  protocolStatePolicy: { handled: [], continueOn: [] },
});

/** How each result of a turn was used: fed into the next model call, or discarded when it was cancelled. */
const usesOf = (turnId: string, rows: ReadonlyArray<{ callId: string; errorCode?: string }>): UseRow[] =>
  rows.map((row) => (row.errorCode === 'Cancelled' ? { callId: row.callId, disposition: 'discarded_with_reason', reason: 'cancelled' } : { callId: row.callId, disposition: 'consumed', ref: `synthesis:${turnId}` }));

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
    turn: turnMachine,
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
    spawnTurn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'model.responded') return;
      const path = `${context.path}/turn-${event.turn}`;
      enqueue.assign({ lastTurn: { turnId: event.effectId, path, status: 'open', classes: [] } });
      enqueue.spawnChild('turn', {
        id: path,
        systemId: path,
        input: {
          path,
          turnId: event.effectId,
          callSpec: event.callSpec ?? missingCallSpec(event.effectId),
          stopReason: event.stopReason,
          toolCalls: event.toolCalls,
          activeMutationPolicyDigest: context.mutationPolicyDigest,
          requiredClaims: [...completionClaims],
          shellTools: [...shellTools],
        },
      });
    }),
    forwardToTurn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'tool.settled' || !context.lastTurn || context.lastTurn.status !== 'open') return;
      const { effectId: _effectId, elapsedMs: _elapsedMs, ...result } = event;
      enqueue.sendTo(context.lastTurn.path, result);
    }),
    declareUses: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'turn.results-ready' || context.lastTurn?.turnId !== event.turnId) return;
      enqueue.sendTo(context.lastTurn.path, { type: 'turn.uses', uses: usesOf(event.turnId, event.rows) });
    }),
    closeTurn: enqueueActions(({ context, event, enqueue }) => {
      if (!isTurnDone(event) || !context.lastTurn) return;
      const output = event.output;
      // The verdict is kept in context; the finished turn actor is stopped so children never accumulate.
      enqueue.stopChild(context.lastTurn.path);
      enqueue.assign({ lastTurn: { ...context.lastTurn, status: output.status, classes: [...new Set(output.findings.map((finding) => finding.class))] } });
      if (!output.joinClosed) enqueue.assign({ endReason: `the tool-call join of turn ${output.turnId} did not close: ${[...new Set(output.findings.map((finding) => finding.class))].join(', ')}` });
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
    refuseCompletion: assign(({ context }) => ({
      endReason: `completion refused: turn ${context.lastTurn?.turnId} is blocked by ${context.lastTurn?.classes.join(', ') || 'unclosed obligations'} (fail closed: no mutation before MutationReady)`,
    })),
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
    isCurrentTurnResults: ({ context, event }) => event.type === 'turn.results-ready' && context.lastTurn?.turnId === event.turnId && context.lastTurn.status === 'open',
    isCurrentTurnDone: ({ context, event }) => isTurnDone(event) && context.lastTurn?.status === 'open' && event.type === `xstate.done.actor.${context.lastTurn.path}` && event.output.turnId === context.lastTurn.turnId,
    turnJoinClosed: ({ event }) => isTurnDone(event) && event.output.joinClosed,
    /** Completing the session is a mutation: the latest tool turn (if any) must have reached MutationReady. */
    mayComplete: ({ context }) => context.lastTurn === null || context.lastTurn.status === 'mutation-ready',
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
    mutationPolicyDigest: input.mutationPolicyDigest ?? 'none',
    lastTurn: null,
    endReason: null,
  }),
  initial: 'idle',
  on: {
    'session.cancelled': { target: '.cancelled', actions: 'noteEventReason' },
    'policy.changed': { actions: assign(({ event }) => (event.type === 'policy.changed' ? { mutationPolicyDigest: event.mutationPolicyDigest } : {})) },
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
              { guard: and(['isAwaitedModelCall', 'hasToolCalls']), target: 'runningTools', actions: ['settleModelCall', 'spawnTurn', 'requestToolCalls'] },
              { guard: and(['isAwaitedModelCall', 'isPausedTurn']), target: 'nextTurn', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'mayComplete']), target: '#session.completed', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding']), target: '#session.failed', actions: ['settleModelCall', 'refuseCompletion'] },
            ],
            'model.failed': { guard: 'isAwaitedModelCall', target: '#session.failed', actions: ['settleModelCall', 'noteEventReason'] },
          },
        },
        runningTools: {
          on: {
            'tool.settled': [
              { guard: and(['isOutstandingTool', 'isLastOutstanding', not('hasPendingApprovals')]), target: 'joiningTurn', actions: ['settleToolCall', 'forwardToTurn'] },
              { guard: and(['isOutstandingTool', 'isLastOutstanding']), target: 'awaitingApproval', actions: ['settleToolCall', 'forwardToTurn'] },
              { guard: 'isOutstandingTool', actions: ['settleToolCall', 'forwardToTurn'] },
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
        joiningTurn: {
          description: 'Every call of the turn has its terminal result; no synthesis (the next model call) until the turn closes its join.',
          on: {
            'turn.results-ready': { guard: 'isCurrentTurnResults', actions: 'declareUses' },
            'xstate.done.actor.*': [
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed']), target: 'nextTurn', actions: 'closeTurn' },
              { guard: 'isCurrentTurnDone', target: '#session.failed', actions: 'closeTurn' },
            ],
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
