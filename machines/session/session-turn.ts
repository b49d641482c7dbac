import type { CallSpec } from '../../models/call-spec.js';
import type { UseRow } from '../../models/turn.records.js';
import type { TurnInput } from '../turn.machine.js';
import { completionClaims, shellTools } from '../session.contract.js';
import type { RequestEffectParams, SessionContext, SessionEvent } from '../session.contract.js';
import { delegatedNote } from './session-budget.js';

/*
 * The session machine's tool turns (machines/session.machine.ts): what opening a reply's tool turn spawns, requests
 * and changes — the tool-call budget and the turn's parallel limit deciding which calls run — and how a turn's results
 * were used. Pure functions of the machine's context and event; the machine's actions enqueue what they return.
 */

/** Without a recorded CallSpec nothing is allowed: every call is `tool.unknown_or_disallowed` and the turn blocks. */
export const missingCallSpec = (callId: string): CallSpec => ({
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
export const usesOf = (turnId: string, rows: ReadonlyArray<{ callId: string; errorCode?: string }>): UseRow[] =>
  rows.map((row) => (row.errorCode === 'Cancelled' ? { callId: row.callId, disposition: 'discarded_with_reason', reason: 'cancelled' } : { callId: row.callId, disposition: 'consumed', ref: `synthesis:${turnId}` }));

/**
 * Opening a reply's tool turn (`startToolTurn`): the turn actor's path (`<path>/turn-<n>`) and input, one
 * `executeTool` request per proposed call (so every call settles and the turn's join closes), and the one context
 * update. The calls the tool-call budget still allows run (in the reply's order); each one past it is settled unrun
 * with a model-visible budget failure, and the session ends `budget-exhausted` once the turn has joined. Each call past
 * the turn's parallel limit (`maxBranches`) is settled unrun with a model-visible refusal, and the session goes on.
 */
export const toolTurnOf = (
  context: SessionContext,
  event: Extract<SessionEvent, { type: 'model.responded' }>,
): { path: string; input: TurnInput; requests: RequestEffectParams[]; update: Partial<SessionContext> } => {
  const path = `${context.path}/turn-${event.turn}`;
  const input: TurnInput = {
    path,
    turnId: event.effectId,
    callSpec: event.callSpec ?? missingCallSpec(event.effectId),
    stopReason: event.stopReason,
    toolCalls: event.toolCalls,
    activeMutationPolicyDigest: context.mutationPolicyDigest,
    ...(event.preFlight ? { preFlight: event.preFlight } : {}),
    requiredClaims: [...completionClaims],
    shellTools: [...shellTools],
  };
  let next = context.nextEffect;
  const outstanding = { ...context.outstanding };
  // The calls this agent's children made count as its own (a child's budget is its share of what was left).
  const spentByChildren = context.tally.delegated.toolCalls;
  const left = Math.max(0, context.budgets.maxToolCalls - context.usage.toolCalls - spentByChildren);
  const proposed = event.toolCalls.length;
  // The calls past the turn's parallel limit (its CallSpec's `maxBranches`) are refused before any runs; they spend
  // no budget and do not count as branches at the join.
  const limit = event.callSpec?.parallelPolicy.maxBranches ?? proposed;
  const requests = event.toolCalls.map((call, index): RequestEffectParams => {
    const effectId = `${context.path}:e${next++}`;
    outstanding[effectId] = { kind: 'executeTool', callId: call.callId };
    const overBudget =
      index >= limit
        ? { parallel: { maxBranches: limit, proposed } }
        : index >= left
        ? { budget: { maxToolCalls: context.budgets.maxToolCalls, proposed, left, ...(spentByChildren > 0 ? { delegated: spentByChildren } : {}), ...(context.child ? { share: true } : {}) } }
        : {};
    // A turn its pre-flight guardrail blocked still gets one result per call (refused, nothing runs), so its join closes.
    const blocked = event.preFlight?.verdict === 'block' ? { preFlight: { ...(event.preFlight.by ? { by: event.preFlight.by } : {}), reason: event.preFlight.reason ?? 'blocked' } } : {};
    return { effectId, kind: 'executeTool', args: { callId: call.callId, name: call.name, arguments: call.arguments, ...(call.invalid ? { invalid: call.invalid } : {}), ...blocked, ...overBudget } };
  });
  const allowed = Math.min(proposed, left, limit);
  const withinLimit = Math.min(proposed, limit);
  const update: Partial<SessionContext> = {
    lastTurn: { turnId: event.effectId, path, status: 'open', classes: [], findings: [] },
    nextEffect: next,
    outstanding,
    usage: { ...context.usage, toolCalls: context.usage.toolCalls + allowed },
    ...(allowed < withinLimit
      ? {
          tally: { ...context.tally, toolCallBudgetSpent: `tool-call budget exhausted: the reply proposed ${proposed} tool call${proposed === 1 ? '' : 's'} with ${left} of ${context.budgets.maxToolCalls} left${delegatedNote(spentByChildren, 'made')}; ${proposed - allowed} ${proposed - allowed === 1 ? 'was' : 'were'} not run` },
        }
      : {}),
  };
  return { path, input, requests, update };
};
