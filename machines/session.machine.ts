import { and, assign, enqueueActions, not, setup, stopChild } from 'xstate';
import { approvalIdOf } from '../models/permission.records.js';
import { delegationMachine, type DelegationMachine } from './delegation.machine.js';
import { permissionMachine } from './permission.machine.js';
import { turnMachine } from './turn.machine.js';
import { mcpConnectionMachine, mcpConnectionPath } from './mcp-connection.machine.js';
import { emptyUsage } from '../models/budgets.js';
import { spentOf } from './delegation/budget-share.js';
import { budgetGuards, budgetLimitsRaisedOf, budgetsRaisedOf, delegatedNote, modelCallReservedOf, modelCallSettledOf, withoutEffect } from './session/session-budget.js';
import { delegationCancelsOf, delegationGuards, delegationJoinOf, delegationStartOf, notify } from './session/session-delegation.js';
import { caveatsNoteOf, endedRecordOf, isCut, reportNoteOf } from './session/session-reply.js';
import { toolTurnOf, usesOf } from './session/session-turn.js';
import { approvalCloseOf, approvalOpenOf, isApprovalDone } from './session/session-approval.js';
import type { SessionOutcome } from '../models/session.records.js';
import { maxCutContinuations, maxOutputCorrections, maxReportCorrections, maxStopContinuations, reportTool } from './session.contract.js';
import type { AgentOutput, EmitRecordParams, RequestEffectParams, SessionContext, SessionEvent, SessionInput, TurnDoneEvent } from './session.contract.js';
import { lazyValue } from '../models/lazy-schema.js';

// The contract (constants, input, context, output, events, action params) lives in its own module; importers of the
// machine keep finding it here.
export * from './session.contract.js';

/** Bumped whenever a change to this machine would make old snapshots restore into the wrong state. */
export const sessionMachineVersion = '9';

/** The model call `reserveModelCall` just reserved (it runs first: the params read the context it assigned). */
const requestModelCall = {
  type: 'requestEffect',
  params: ({ context }: { context: SessionContext }): RequestEffectParams => ({ effectId: context.awaitingModel!, kind: 'callModel', args: { turn: context.usage.turns } }),
} as const;

let delegatingMachine: DelegationMachine | undefined;
/** The delegation machine whose children are this session machine, made once. */
const delegating = (): DelegationMachine => (delegatingMachine ??= delegationMachine.provide({ actors: { agent: childSessionMachine } }) as DelegationMachine);

const isTurnDone = (event: SessionEvent): event is TurnDoneEvent =>
  event.type.startsWith('xstate.done.actor.') && typeof (event as Partial<TurnDoneEvent>).output?.turnId === 'string';

const ended = (status: SessionOutcome) => ({ type: 'emitRecord', params: ({ context }: { context: SessionContext }) => endedRecordOf(context, status) }) as const;

/**
 * The agent lifecycle (DESIGN §4): idle → running (awaiting model ⇄ running tools ⇄ awaiting approval) →
 * completed · failed · cancelled · budget-exhausted. A call that needs approval settles its effect with
 * `approval.requested`, which spawns a permission actor (`<path>/approval-<n>`); when that actor finishes, the
 * call is requested again as a fresh `executeTool` effect carrying the answer. Pure: it requests effects through `requestEffect` and learns their outcomes from
 * input events; the runtime executes them only after the step's records are durable.
 */
const sessionSetup = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: {
    permission: permissionMachine,
    turn: turnMachine,
    mcpConnection: mcpConnectionMachine,
    /** The delegation machine with this machine as its child agent (provided here; referenced lazily, as it needs this machine). */
    get delegation(): DelegationMachine {
      return delegating();
    },
  },
  actions: {
    /** Observed by the host through inspection; deliberately does nothing here (machines perform no I/O). */
    requestEffect: (_: unknown, _params: RequestEffectParams) => {},
    /** Observed by the host through inspection; deliberately does nothing here. */
    emitRecord: (_: unknown, _params: EmitRecordParams) => {},
    /**
     * Reserve the next model call (its effect id, the turn it counts as); `requestModelCall` then asks for it. A plain
     * assign and a declarative action rather than `enqueueActions`, which builds its `enqueue` closures on every call.
     */
    reserveModelCall: assign(({ context }) => modelCallReservedOf(context)),
    settleModelCall: assign(({ context, event }) => modelCallSettledOf(context, event)),
    /**
     * Open the reply's tool turn (`toolTurnOf`): spawn its turn actor and request one effect per proposed call, the
     * tool-call budget and the parallel limit deciding which run. One action with one context update.
     */
    startToolTurn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'model.responded') return;
      const { path, input, requests, update } = toolTurnOf(context, event);
      enqueue.spawnChild('turn', { id: path, systemId: path, input });
      for (const params of requests) enqueue({ type: 'requestEffect', params });
      enqueue.assign(update);
    }),
    declareUses: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'turn.results-ready' || context.lastTurn?.turnId !== event.turnId) return;
      enqueue.sendTo(context.lastTurn.path, { type: 'turn.uses', uses: usesOf(event.turnId, event.rows) });
    }),
    /** The finished turn actor is stopped so children never accumulate (`closeTurn` keeps its verdict in context). */
    stopTurn: stopChild(({ context }) => context.lastTurn?.path ?? ''),
    closeTurn: assign(({ context, event }) => {
      if (!isTurnDone(event) || !context.lastTurn) return {};
      const output = event.output;
      const classes = [...new Set(output.findings.map((finding) => finding.class))];
      return {
        // Key by key (the same keys, in the same order): spreading the verdict and adding \`joinDigest\` took V8's slow path.
        lastTurn: { turnId: context.lastTurn.turnId, path: context.lastTurn.path, status: output.status, classes, findings: output.findings, joinDigest: output.joinDigest },
        ...(output.joinClosed ? {} : { endReason: `the tool-call join of turn ${output.turnId} did not close: ${classes.join(', ')}` }),
      };
    }),
    /**
     * A call of the turn settled: it is no longer outstanding, a child's `submit_report` result is noted (an ok one is
     * its report; an invalid one is a broken report, one correction round), and the result goes on to the open turn.
     * One action with one context update (these were three actions, two of them building `enqueue` closures).
     */
    settleTool: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'tool.settled') return;
      const outstanding = withoutEffect(context.outstanding, event.effectId);
      const usage = { ...context.usage, elapsedMs: Math.max(context.usage.elapsedMs, event.elapsedMs) };
      const report = context.child && event.name === reportTool ? reportNoteOf(context, event) : undefined;
      enqueue.assign({ outstanding, usage, ...report?.update });
      if (report?.rejected) enqueue({ type: 'emitRecord', params: report.rejected });
      if (context.lastTurn?.status === 'open') {
        const { effectId: _effectId, elapsedMs: _elapsedMs, ...result } = event;
        enqueue.sendTo(context.lastTurn.path, result);
      }
    }),
    /** A child replied without calling `submit_report`: a broken report. */
    noteMissingReport: enqueueActions(({ context, enqueue }) => {
      if (!context.child) return;
      const attempt = context.tally.contractFailures + 1;
      enqueue.assign({ tally: { ...context.tally, contractFailures: attempt } });
      enqueue({ type: 'emitRecord', params: { type: 'report.rejected', data: { reason: 'missing', attempt, format: context.child.format, final: attempt > maxReportCorrections } } });
    }),
    failContract: assign(({ context }) => ({
      failureClass: 'contract' as const,
      endReason: context.report
        ? `the report's turn ${context.lastTurn?.turnId} did not reach MutationReady (${context.lastTurn?.classes.join(', ') || 'blocked'}): the report is not merged`
        : `the output contract was broken ${context.tally.contractFailures} times (one correction round): no valid ${context.child?.format ?? 'report'} was submitted`,
    })),
    /** A `delegate_task` call's plan was accepted: spawn its delegation actor; the call stays outstanding until the join. */
    spawnDelegation: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'delegation.accepted') return;
      const { path, update, input } = delegationStartOf(context, event);
      enqueue.assign(update);
      enqueue.spawnChild('delegation', { id: path, systemId: path, input });
    }),
    /**
     * The join was decided: its observation is the call's terminal result. What the children spent is charged to this
     * agent (their tokens to its usage, their turns and tool calls to `delegated`) and their held shares are released.
     */
    closeDelegation: enqueueActions(({ context, event, enqueue }) => {
      const join = delegationJoinOf(context, event);
      if (!join) return;
      enqueue.stopChild(join.delegation);
      enqueue.assign(join.update);
      if (context.lastTurn?.status === 'open') enqueue.sendTo(context.lastTurn.path, { type: 'tool.settled', callId: join.output.callId, name: 'delegate_task', status: 'ok', observation: join.output.observation });
    }),
    /** An MCP server starts: its connection actor (`<path>/mcp/<server>`) is spawned, or told to start again (a resume). */
    startMcpConnection: enqueueActions(({ context, event, enqueue, system }) => {
      if (event.type !== 'mcp.started') return;
      const path = mcpConnectionPath(context.path, event.server);
      const existing = system.get(path);
      if (existing) enqueue.sendTo(existing, event);
      else enqueue.spawnChild('mcpConnection', { id: path, systemId: path, input: { path, server: event.server, transport: event.transport } });
    }),
    /** The session was cancelled: every running delegation stops its children and records why. */
    cancelDelegations: enqueueActions(({ context, event, enqueue }) => {
      for (const { delegation, cancel } of delegationCancelsOf(context, event)) enqueue.sendTo(delegation, cancel);
    }),
    /** A call needs approval: its effect is settled and a permission actor (`<path>/approval-<n>`) asks. */
    openApproval: enqueueActions(({ context, event, enqueue, system }) => {
      if (event.type !== 'approval.requested') return;
      const { update, input, notice } = approvalOpenOf(context, event);
      enqueue.assign(update);
      enqueue.spawnChild('permission', { id: event.approvalId, systemId: event.approvalId, input });
      notify(system, context, notice, enqueue.sendTo);
    }),
    /** The permission actor answered: the call is requested again as a fresh `executeTool` effect carrying the answer. */
    closeApproval: enqueueActions(({ context, event, enqueue, system }) => {
      const closed = approvalCloseOf(context, event);
      if (!closed) return;
      enqueue.stopChild(closed.approvalId);
      enqueue.assign(closed.update);
      enqueue({ type: 'requestEffect', params: closed.request });
      notify(system, context, closed.notice, enqueue.sendTo);
    }),
    /**
     * The model answered after a blocked tool turn: the answer is its to give, so the session completes — with the
     * turn's findings on `session.ended`, and nothing that turn did counted as MutationReady.
     */
    noteUnresolved: assign(({ context }) =>
      context.lastTurn?.status === 'blocked'
        ? { endReason: `answered over turn ${context.lastTurn.turnId}, which is blocked by ${context.lastTurn.classes.join(', ') || 'unclosed obligations'}: nothing it did is MutationReady` }
        : {},
    ),
    /** The final reply ends the session: what it leaves open (cut at the limit, a stop hook still objecting) goes on `session.ended`. */
    noteCaveats: assign(({ context, event }) => caveatsNoteOf(context, event)),
    /** A final answer the output schema refused goes back to the model (its errors are in the reply's record). */
    countOutputCorrection: assign(({ context }) => ({ tally: { ...context.tally, outputCorrections: (context.tally.outputCorrections ?? 0) + 1 } })),
    /** The answer still did not validate once the corrections were spent: the session fails, naming the errors. */
    failOutput: assign(({ context, event }) => {
      const errors = event.type === 'model.responded' && event.output?.ok === false ? event.output.errors : ['the final answer did not validate'];
      return {
        failureClass: 'contract' as const,
        endReason: `OUTPUT_INVALID: the final answer did not validate against the output schema after ${context.tally.outputCorrections ?? 0} correction(s): ${errors.join('; ')}`,
        tally: { ...context.tally, outputErrors: [...errors] },
      };
    }),
    /** The validated final answer is the session's output (on `session.ended`). */
    noteOutput: assign(({ context, event }) => (event.type === 'model.responded' && event.output?.ok === true ? { tally: { ...context.tally, answer: { value: event.output.value } } } : {})),
    /** A person raised the spent budget: the given limits replace the recorded ones, and the end is undone. */
    raiseBudgets: assign(({ context, event }) => (event.type === 'session.budgets-raised' ? budgetsRaisedOf(context, event) : {})),
    /** A person raised the budgets of a session that has not ended (an interrupted one, on resume): the limits are replaced. */
    raiseLimits: assign(({ context, event }) => (event.type === 'session.budgets-raised' ? budgetLimitsRaisedOf(context, event) : {})),
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
      event.type === 'tool.settled' && context.outstanding[event.effectId]?.kind === 'executeTool' && context.outstanding[event.effectId]?.delegation === undefined,
    ...delegationGuards,
    isChild: ({ context }) => context.child !== null,
    hasReport: ({ context }) => context.report !== null,
    turnMutationReady: ({ event }) => isTurnDone(event) && event.output.status === 'mutation-ready',
    correctionLeft: ({ context }) => context.tally.contractFailures < maxReportCorrections,
    contractExhausted: ({ context }) => context.tally.contractFailures > maxReportCorrections,
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
    /** A `stop` hook sent the final reply back (the executor asked), and the bound is not reached. */
    hasUnseenMessage: ({ context }) => context.tally.unseenMessage,
    isContinuation: ({ context, event }) => event.type === 'model.responded' && event.continuation !== undefined && context.tally.stopContinuations < maxStopContinuations,
    /** The output token limit cut a reply with no tool calls, and fewer than `maxCutContinuations` in a row were: the model continues it. */
    isCutReply: ({ context, event }) => isCut(event) && context.tally.cutReplies < maxCutContinuations,
    /** The provider paused a long turn (`pause_turn`): the model continues it in another call. */
    isPausedTurn: ({ event }) => event.type === 'model.responded' && event.stopReason === 'pause_turn',
    /** The final answer did not validate against the session's output schema. */
    isInvalidOutput: ({ event }) => event.type === 'model.responded' && event.output?.ok === false,
    outputCorrectionLeft: ({ context }) => (context.tally.outputCorrections ?? 0) < maxOutputCorrections,
    /** A conversation's final answer ends the prompt's turn: the session waits for the next message. */
    isConversation: ({ context }) => context.tally.conversation === true,
    ...budgetGuards,
    nothingElseOutstanding: ({ context, event }) =>
      Object.keys(context.outstanding).every((effectId) => 'effectId' in event && effectId === event.effectId),
  },
});

/**
 * The session machine with its `budgetExhausted` state either final (a child agent: its delegation joins on its end)
 * or raisable (the root: a `session.budgets-raised` above what is spent runs it again, and one taken in `idle` or
 * `running` replaces the limits in place). Both have the same states and transitions otherwise, so the records a
 * budget's end derives are the same as before the raise existed.
 */
const sessionMachineOf = (spentBudget: 'final' | 'raisable') => {
  /** The root takes a raise while it runs or waits too (an interrupted session resumed with new limits); it stays where it is. */
  const raiseInPlace = spentBudget === 'raisable' ? { 'session.budgets-raised': { guard: 'raisesBudgets', actions: 'raiseLimits' } } as const : {};
  return sessionSetup.createMachine({
  id: 'session',
  context: ({ input }) => ({
    path: input.path,
    sessionId: input.sessionId,
    budgets: input.budgets,
    usage: { ...emptyUsage, elapsedMs: input.child?.startedAtMs ?? 0 },
    nextEffect: 1,
    outstanding: {},
    awaitingModel: null,
    approvals: {},
    mutationPolicyDigest: input.mutationPolicyDigest ?? 'none',
    lastTurn: null,
    endReason: null,
    child: input.child ?? null,
    startedAtMs: input.child?.startedAtMs ?? 0,
    report: null,
    failureClass: null,
    outcome: null,
    caveats: [],
    tally: { contractFailures: 0, stopContinuations: 0, cutReplies: 0, unseenMessage: false, toolCallBudgetSpent: null, delegated: { turns: 0, toolCalls: 0 }, ...(input.conversation ? { conversation: true } : {}) },
  }),
  initial: 'idle',
  on: {
    'session.cancelled': { target: '.cancelled', actions: ['noteEventReason', 'cancelDelegations'] },
    'policy.changed': { actions: assign(({ event }) => (event.type === 'policy.changed' ? { mutationPolicyDigest: event.mutationPolicyDigest } : {})) },
    'mcp.started': { guard: not('isChild'), actions: 'startMcpConnection' },
  },
  states: {
    idle: {
      description: 'A child agent starts at once: its objective (in its task package) is its first message. A conversation comes back here after each final answer.',
      always: { guard: 'isChild', target: 'running' },
      on: { 'user.message': { target: 'running' }, ...raiseInPlace },
    },
    running: {
      initial: 'nextTurn',
      on: {
        'effect.failed': { guard: 'isOutstandingEffect', target: 'failed', actions: 'noteEventReason' },
        ...raiseInPlace,
      },
      states: {
        nextTurn: {
          always: [
            {
              guard: not('turnBudgetLeft'),
              target: '#session.budgetExhausted',
              actions: assign(({ context }) => ({ endReason: `turn budget exhausted${delegatedNote(context.tally.delegated.turns, 'taken')}` })),
            },
            { guard: not('wallTimeLeft'), target: '#session.budgetExhausted', actions: assign({ endReason: 'wall-time budget exhausted' }) },
            // No model call once the tokens are spent (a join can charge children's tokens that use them all up).
            { guard: not('tokensLeft'), target: '#session.budgetExhausted', actions: assign({ endReason: 'token budget exhausted' }) },
            { target: 'awaitingModel' },
          ],
        },
        awaitingModel: {
          entry: ['reserveModelCall', requestModelCall],
          on: {
            // A follow-up sent while the model works is not in this call's input: it gets a turn of its own.
            'user.message': { actions: assign(({ context }) => ({ tally: { ...context.tally, unseenMessage: true } })) },
            'model.responded': [
              {
                guard: and(['isAwaitedModelCall', not('tokenBudgetLeft')]),
                target: '#session.budgetExhausted',
                actions: ['settleModelCall', assign({ endReason: 'token budget exhausted' })],
              },
              { guard: and(['isAwaitedModelCall', 'hasToolCalls']), target: 'runningTools', actions: ['settleModelCall', 'startToolTurn'] },
              { guard: and(['isAwaitedModelCall', 'isPausedTurn']), target: 'nextTurn', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'hasUnseenMessage']), target: 'nextTurn', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isCutReply']), target: 'nextTurn', actions: 'settleModelCall' },
              {
                guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', not('isChild'), 'isContinuation']),
                target: 'nextTurn',
                actions: ['settleModelCall', assign(({ context }) => ({ tally: { ...context.tally, stopContinuations: context.tally.stopContinuations + 1 } }))],
              },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isChild', 'correctionLeft']), target: 'nextTurn', actions: ['settleModelCall', 'noteMissingReport'] },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isChild']), target: '#session.failed', actions: ['settleModelCall', 'noteMissingReport', 'failContract'] },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isInvalidOutput', 'outputCorrectionLeft']), target: 'nextTurn', actions: ['settleModelCall', 'countOutputCorrection'] },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isInvalidOutput']), target: '#session.failed', actions: ['settleModelCall', 'failOutput'] },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding', 'isConversation']), target: '#session.idle', actions: 'settleModelCall' },
              { guard: and(['isAwaitedModelCall', 'nothingElseOutstanding']), target: '#session.completed', actions: ['settleModelCall', 'noteUnresolved', 'noteCaveats', 'noteOutput'] },
            ],
            'model.failed': [
              { guard: and(['isAwaitedModelCall', 'wallTimeSpentAtFailure']), target: '#session.budgetExhausted', actions: ['settleModelCall', assign({ endReason: 'wall-time budget exhausted' })] },
              { guard: 'isAwaitedModelCall', target: '#session.failed', actions: ['settleModelCall', 'noteEventReason'] },
            ],
          },
        },
        runningTools: {
          on: {
            'tool.settled': [
              { guard: and(['isOutstandingTool', 'isLastOutstanding', not('hasPendingApprovals')]), target: 'joiningTurn', actions: 'settleTool' },
              { guard: and(['isOutstandingTool', 'isLastOutstanding']), target: 'awaitingApproval', actions: 'settleTool' },
              { guard: 'isOutstandingTool', actions: 'settleTool' },
            ],
            'delegation.accepted': { guard: 'isAcceptedDelegation', actions: 'spawnDelegation' },
            'approval.requested': [
              { guard: and(['isOutstandingApprovalRequest', 'isLastOutstanding']), target: 'awaitingApproval', actions: 'openApproval' },
              { guard: 'isOutstandingApprovalRequest', actions: 'openApproval' },
            ],
            'xstate.done.actor.*': [
              { guard: 'isPendingApprovalOutcome', actions: 'closeApproval' },
              { guard: and(['isLastOutstandingDelegation', not('hasPendingApprovals')]), target: 'joiningTurn', actions: 'closeDelegation' },
              { guard: 'isLastOutstandingDelegation', target: 'awaitingApproval', actions: 'closeDelegation' },
              { guard: 'isDelegationDone', actions: 'closeDelegation' },
            ],
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
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed', 'hasReport', 'turnMutationReady']), target: '#session.completed', actions: ['stopTurn', 'closeTurn'] },
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed', 'hasReport']), target: '#session.failed', actions: ['stopTurn', 'closeTurn', 'failContract'] },
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed', 'contractExhausted']), target: '#session.failed', actions: ['stopTurn', 'closeTurn', 'failContract'] },
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed', 'toolCallBudgetSpent']), target: '#session.budgetExhausted', actions: ['stopTurn', 'closeTurn', assign(({ context }) => ({ endReason: context.tally.toolCallBudgetSpent }))] },
              { guard: and(['isCurrentTurnDone', 'turnJoinClosed']), target: 'nextTurn', actions: ['stopTurn', 'closeTurn'] },
              { guard: 'isCurrentTurnDone', target: '#session.failed', actions: ['stopTurn', 'closeTurn'] },
            ],
          },
        },
      },
    },
    completed: { type: 'final', entry: [assign({ outcome: 'completed' as const }), ended('completed')] },
    failed: { type: 'final', entry: [assign({ outcome: 'failed' as const }), ended('failed')] },
    cancelled: { type: 'final', entry: [assign({ outcome: 'cancelled' as const }), ended('cancelled')] },
    budgetExhausted:
      spentBudget === 'final'
        ? { type: 'final', entry: [assign({ outcome: 'budget-exhausted' as const }), ended('budget-exhausted')] }
        : {
            description: 'The root ended `budget-exhausted` (its `session.ended` is recorded); a raise of the spent budget above what is spent runs it again.',
            entry: [assign({ outcome: 'budget-exhausted' as const }), ended('budget-exhausted')],
            on: { 'session.budgets-raised': { guard: 'raisesSpentBudgets', target: 'running', actions: 'raiseBudgets' } },
          },
  },
  output: ({ context }): AgentOutput => {
    const status = context.outcome ?? 'failed';
    const report = status === 'completed' && context.report && context.lastTurn?.status === 'mutation-ready' && context.lastTurn.joinDigest ? context.report : null;
    return {
      kind: 'agent',
      path: context.path,
      status,
      ...(context.endReason ? { reason: context.endReason } : {}),
      ...(report ? { report: report.value, evidence: { turnId: context.lastTurn!.turnId, joinDigest: context.lastTurn!.joinDigest! } } : {}),
      ...(status === 'completed' || status === 'cancelled' ? {} : { failureClass: context.failureClass ?? 'runtime' }),
      // What this agent and every agent it delegated to spent: its parent charges all of it.
      usage: spentOf(context),
    };
  },
});
};

/**
 * The root agent's statechart (the session): its `budgetExhausted` state is not final, so a person can raise the spent
 * budget (`session.budgets-raised`) and the session runs again; the host treats the state as ended until then. While
 * it runs or waits (`idle`, `running`) a raise replaces the limits in place.
 */
export const sessionMachine = lazyValue(() => sessionMachineOf('raisable'));

/** A delegated child agent's statechart: the same machine with a final `budgetExhausted` (its delegation joins on it). */
export const childSessionMachine = lazyValue(() => sessionMachineOf('final'));

/** Whether a machine definition is one of the session machine's two forms (an agent, root or child). */
export const isSessionMachine = (logic: unknown): boolean => logic === sessionMachine || logic === childSessionMachine;

/** Whether a root state value is the spent budget's end (which only a raise leaves). */
export const isBudgetSpentValue = (value: unknown): boolean => value === 'budgetExhausted';

export type SessionMachine = typeof sessionMachine;
