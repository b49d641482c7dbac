import { assign, setup } from 'xstate';
import type { FailClosedFinding } from '../models/fail-closed.js';
import type { ToolCall } from '../models/model.records.js';
import type { CallSpec, GuardrailEvidence, Provenance, RequestRow, ResultRow, UseRow } from '../models/turn.records.js';
import { detectGuardrailFindings, detectPreFlightFindings, detectRequestFindings, detectResultFindings } from './typestate/detectors.js';
import { digestOf, rowsDigest } from './typestate/digest.js';
import { closeJoin, joinDigestOf, type JoinClosed } from './typestate/join.js';
import { checkMutationReady } from './typestate/mutation.js';
import { lazyValue } from '../models/lazy-schema.js';

/** Bumped whenever a change would make old snapshots of this machine restore into the wrong state. */
export const turnMachineVersion = '2';

/** Model-visible failure codes whose retry might succeed (`retryable` in the failure envelope). */
const retryableCodes = new Set(['Timeout', 'InDoubt']);

export interface TurnInput {
  path: string;
  turnId: string;
  callSpec: CallSpec;
  stopReason: string;
  toolCalls: ToolCall[];
  /** The mutation policy digest active in the session when the turn started. */
  activeMutationPolicyDigest: string;
  /** Claims the mutation this turn may enable (e.g. completing the session) requires. */
  requiredClaims: string[];
  /** Tools whose results must carry shell boundary evidence. */
  shellTools: string[];
  /** The turn's pre-flight guardrail decision (from `model.responded`), when one was made. */
  preFlight?: { verdict: 'pass' | 'block'; by?: string; reason?: string };
}

export interface TurnContext extends TurnInput {
  requests: RequestRow[];
  results: ResultRow[];
  uses: UseRow[];
  findings: FailClosedFinding[];
  /** Call ids still waiting for their terminal result. */
  outstanding: string[];
  /** The branded join evidence once `closeJoin` accepted it. */
  join: JoinClosed | null;
  blockedStage: string | null;
  status: TurnOutput['status'] | null;
}

/** A terminal tool result as the parent forwards it (the data of a `tool.settled` input record). */
export interface TurnToolSettled {
  type: 'tool.settled';
  effectId?: string;
  callId: string;
  name: string;
  status: 'ok' | 'error';
  errorCode?: string;
  observation: string;
  truncated?: { omittedBytes: number; artifact: string };
  provenance?: Provenance;
  failedStage?: string;
  guardrails?: GuardrailEvidence[];
}

export type TurnEvent = TurnToolSettled | { type: 'turn.uses'; uses: UseRow[] };

/** What the parent learns when the turn ends. */
export interface TurnOutput {
  turnId: string;
  status: 'mutation-ready' | 'blocked';
  joinClosed: boolean;
  joinDigest: string | null;
  findings: FailClosedFinding[];
}

const rowOf = (event: TurnToolSettled): ResultRow => ({
  callId: event.callId,
  name: event.name,
  status: event.status,
  ...(event.errorCode ? { errorCode: event.errorCode, retryable: retryableCodes.has(event.errorCode), errorMessageDigest: digestOf(event.observation) } : {}),
  outputDigest: digestOf(event.observation),
  ...(event.provenance ? { provenance: event.provenance } : {}),
  ...(event.truncated ? { truncation: event.truncated } : {}),
  ...(event.failedStage ? { failedStage: event.failedStage } : {}),
  ...(event.guardrails ? { guardrails: event.guardrails } : {}),
  observationChars: event.observation.length,
});

/**
 * A turn's initial context: the input's fields in their order (`preFlight`, when there is one, where `toolTurnOf`
 * puts it), then the turn's own. Written out key by key, not as `{ ...input, requests, … }`: cloning the input and
 * adding eight keys took V8's slow path on every turn (~20 µs a turn, against ~0.3 µs for the literal).
 */
const turnContextOf = (input: TurnInput, requests: RequestRow[], findings: FailClosedFinding[]): TurnContext => {
  const outstanding = requests.map((request) => request.callId);
  return input.preFlight === undefined
    ? { path: input.path, turnId: input.turnId, callSpec: input.callSpec, stopReason: input.stopReason, toolCalls: input.toolCalls, activeMutationPolicyDigest: input.activeMutationPolicyDigest, requiredClaims: input.requiredClaims, shellTools: input.shellTools, requests, results: [], uses: [], findings, outstanding, join: null, blockedStage: null, status: null }
    : { path: input.path, turnId: input.turnId, callSpec: input.callSpec, stopReason: input.stopReason, toolCalls: input.toolCalls, activeMutationPolicyDigest: input.activeMutationPolicyDigest, preFlight: input.preFlight, requiredClaims: input.requiredClaims, shellTools: input.shellTools, requests, results: [], uses: [], findings, outstanding, join: null, blockedStage: null, status: null };
};

const witness = (type: string, data: (context: TurnContext) => Record<string, unknown>) =>
  ({ type: 'emitRecord', params: ({ context }: { context: TurnContext }) => ({ type, data: data(context) }) }) as const;


/**
 * The typestate of one model turn with tool calls (harness-typestate §4): callSpec → toolRequests → toolResults →
 * toolUse → joinClosed → mutationReady, or `blocked` carrying the fail-closed classes found. Every stage emits a
 * witness record. The parent (the session, which runs the calls and their approvals) forwards each terminal result,
 * declares how the results were used (`turn.uses`) when the turn announces them all, and learns the outcome from the
 * turn's output. Pure: digests are computed with a synchronous BLAKE3.
 */
export const turnMachine = lazyValue(() => setup({
  types: { context: {} as TurnContext, events: {} as TurnEvent, input: {} as TurnInput, output: {} as TurnOutput },
  actions: {
    /** Observed by the host through inspection; deliberately does nothing here. */
    emitRecord: (_: unknown, _params: { type: string; data: Record<string, unknown> }) => {},
    recordResult: assign(({ context, event }) => {
      if (event.type !== 'tool.settled') return {};
      const row = rowOf(event);
      const requestIndex = context.requests.findIndex((request) => request.callId === event.callId);
      const known = context.outstanding.includes(event.callId);
      const findings = known
        ? [...detectResultFindings({ callSpec: context.callSpec, row, requestIndex, arrivedBefore: context.results.filter((result) => context.requests.some((request) => request.callId === result.callId)).length, shellTools: context.shellTools }), ...detectGuardrailFindings(context.callSpec, row)]
        : [{ class: 'tool.result_orphan' as const, detail: requestIndex < 0 ? `result for unknown call ${event.callId}` : `second result for call ${event.callId}`, callId: event.callId }];
      return {
        results: [...context.results, row],
        outstanding: known ? context.outstanding.filter((callId) => callId !== event.callId) : context.outstanding,
        findings: [...context.findings, ...findings],
      };
    }),
    recordUses: assign(({ context, event }) => (event.type === 'turn.uses' ? { uses: [...context.uses, ...event.uses] } : {})),
    closeJoin: assign(({ context }) => {
      const outcome = closeJoin({ turnId: context.turnId, callSpec: context.callSpec, stopReason: context.stopReason, requests: context.requests, results: context.results, uses: context.uses });
      if (outcome.ok) return { join: outcome.value };
      return { findings: [...context.findings, ...outcome.findings], blockedStage: 'join' };
    }),
    checkMutation: assign(({ context }) => {
      if (!context.join) return { blockedStage: 'mutation' };
      const outcome = checkMutationReady({ join: context.join, callSpec: context.callSpec, activeMutationPolicyDigest: context.activeMutationPolicyDigest, requiredClaims: context.requiredClaims, rows: context.results, findings: context.findings });
      return outcome.ok ? {} : { findings: outcome.findings, blockedStage: 'mutation' };
    }),
    /**
     * Tell the parent (found in the actor system by its path) that every result is in, so it can declare uses.
     * Resolved through the system rather than `sendParent` so the machine also runs parentless under model checking.
     */
    announceResults: ({ context, system }) => {
      const parentPath = context.path.slice(0, context.path.lastIndexOf('/'));
      system.get(parentPath)?.send({ type: 'turn.results-ready', turnId: context.turnId, rows: context.results });
    },
  },
  guards: {
    observeOnly: ({ context }) => context.callSpec.actionMode === 'text' && !context.callSpec.normalizerId,
    allResultsIn: ({ context }) => context.outstanding.length === 0,
    joinClosed: ({ context }) => context.join !== null,
    mutationClear: ({ context }) => context.blockedStage === null && context.findings.length === 0,
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => {
    const requests = input.toolCalls.map((call) => ({ callId: call.callId, name: call.name, argumentsDigest: digestOf(call.arguments) }));
    return turnContextOf(input, requests, [...detectRequestFindings(input.callSpec, requests), ...detectPreFlightFindings(input.callSpec, input.preFlight)]);
  },
  initial: 'callSpec',
  states: {
    callSpec: {
      entry: witness('turn.call-spec', (context) => ({ turnId: context.turnId, callSpec: context.callSpec, digest: digestOf(context.callSpec) })),
      always: 'toolRequests',
    },
    toolRequests: {
      entry: witness('turn.requests', (context) => ({ turnId: context.turnId, requests: context.requests, multisetDigest: rowsDigest(context.requests) })),
      always: [
        { guard: 'observeOnly', target: 'blocked', actions: assign({ blockedStage: 'requests', status: 'blocked' }) },
        { target: 'toolResults' },
      ],
    },
    toolResults: {
      always: { guard: 'allResultsIn', target: 'toolUse' },
      on: {
        'tool.settled': { actions: 'recordResult' },
        'turn.uses': {
          target: 'blocked',
          actions: assign(({ context }) => ({
            findings: [...context.findings, { class: 'tool.join_incomplete' as const, detail: `uses declared with ${context.outstanding.length} result(s) still outstanding` }],
            blockedStage: 'join',
            status: 'blocked' as const,
          })),
        },
      },
    },
    toolUse: {
      entry: [witness('turn.results', (context) => ({ turnId: context.turnId, rows: context.results, digest: rowsDigest(context.results) })), 'announceResults'],
      on: {
        'tool.settled': { actions: 'recordResult' },
        'turn.uses': { target: 'closingJoin', actions: 'recordUses' },
      },
    },
    closingJoin: {
      entry: [witness('turn.uses', (context) => ({ turnId: context.turnId, uses: context.uses, digest: rowsDigest(context.uses) })), 'closeJoin'],
      always: [{ guard: 'joinClosed', target: 'joinClosed' }, { target: 'blocked', actions: assign({ status: 'blocked' }) }],
    },
    joinClosed: {
      entry: [witness('turn.join-closed', (context) => ({ turnId: context.turnId, joinDigest: context.join?.joinDigest ?? joinDigestOf(context) })), 'checkMutation'],
      always: [
        { guard: 'mutationClear', target: 'mutationReady', actions: assign({ status: 'mutation-ready' }) },
        { target: 'blocked', actions: assign({ status: 'blocked' }) },
      ],
    },
    mutationReady: {
      type: 'final',
      entry: witness('turn.mutation-ready', (context) => ({ turnId: context.turnId, joinDigest: context.join?.joinDigest, mutationPolicyDigest: context.activeMutationPolicyDigest })),
    },
    blocked: {
      type: 'final',
      entry: witness('turn.blocked', (context) => ({ turnId: context.turnId, stage: context.blockedStage ?? 'mutation', joinClosed: context.join !== null, findings: context.findings })),
    },
  },
  output: ({ context }) => ({
    turnId: context.turnId,
    status: context.status ?? 'blocked',
    joinClosed: context.join !== null,
    joinDigest: context.join?.joinDigest ?? null,
    findings: context.findings,
  }),
}));

export type TurnMachine = typeof turnMachine;
