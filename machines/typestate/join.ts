import type { FailClosedFinding } from '../../models/fail-closed.js';
import type { CallSpec, RequestRow, ResultRow, UseRow } from '../../models/turn.records.js';
import { digestOf, rowsDigest } from './digest.js';

declare const joinClosedBrand: unique symbol;

/**
 * Evidence that a turn's tool-call graph is closed: every request has exactly one terminal result, every result a
 * valid use, the branch count fits the parallel policy and the stop reason is admissible. Only `closeJoin` makes one.
 */
export type JoinClosed = { readonly turnId: string; readonly joinDigest: string; readonly [joinClosedBrand]: true };

export interface JoinInput {
  turnId: string;
  callSpec: CallSpec;
  stopReason: string;
  requests: readonly RequestRow[];
  /** Every result received, in arrival order, including duplicates and orphans. */
  results: readonly ResultRow[];
  uses: readonly UseRow[];
}

export type JoinOutcome = { ok: true; value: JoinClosed } | { ok: false; findings: FailClosedFinding[] };

/**
 * The join digest over the request, result and use digest sets (each order-insensitive). The lists are a turn's
 * context rows, never changed in place, so each set's digest is the one its witness already computed (`rowsDigest`).
 */
export const joinDigestOf = (input: Pick<JoinInput, 'requests' | 'results' | 'uses'>): string =>
  digestOf({ requests: rowsDigest(input.requests), results: rowsDigest(input.results), uses: rowsDigest(input.uses) });

/** Check the JoinClosed obligations (harness-typestate §4.5); on success return the branded value. */
export const closeJoin = (input: JoinInput): JoinOutcome => {
  const findings: FailClosedFinding[] = [];
  const requested = new Set(input.requests.map((request) => request.callId));
  const resultCounts = new Map<string, number>();
  for (const result of input.results) {
    resultCounts.set(result.callId, (resultCounts.get(result.callId) ?? 0) + 1);
    if (!requested.has(result.callId)) findings.push({ class: 'tool.result_orphan', detail: `result for unknown call ${result.callId}`, callId: result.callId });
  }
  for (const [callId, count] of resultCounts) {
    if (count > 1 && requested.has(callId)) findings.push({ class: 'tool.result_orphan', detail: `${count} results for call ${callId}`, callId });
  }
  for (const callId of requested) {
    if (!resultCounts.has(callId)) findings.push({ class: 'tool.result_missing', detail: `no result for call ${callId}`, callId });
  }
  const usesByCall = new Map<string, number>();
  for (const use of input.uses) {
    usesByCall.set(use.callId, (usesByCall.get(use.callId) ?? 0) + 1);
    if (!requested.has(use.callId)) findings.push({ class: 'tool.use_unknown_result', detail: `use of unknown call ${use.callId}`, callId: use.callId });
    else if (!resultCounts.has(use.callId)) findings.push({ class: 'tool.use_without_result', detail: `use of call ${use.callId} before its result`, callId: use.callId });
    if (use.disposition === 'consumed' && !use.ref) findings.push({ class: 'mutation.use_evidence_missing', detail: `consumed use of ${use.callId} names no ref`, callId: use.callId });
    if (use.disposition === 'discarded_with_reason' && !use.reason) findings.push({ class: 'mutation.use_evidence_missing', detail: `discarded use of ${use.callId} has no reason`, callId: use.callId });
  }
  for (const callId of resultCounts.keys()) {
    if (requested.has(callId) && !usesByCall.has(callId)) findings.push({ class: 'tool.use_missing', detail: `result of ${callId} has no use disposition`, callId });
  }
  // A call refused unrun for the parallel limit (its result's failed stage is `parallel`) is not a branch.
  const refusedForLimit = new Set(input.results.filter((result) => result.failedStage === 'parallel').map((result) => result.callId));
  const branches = input.requests.filter((request) => !refusedForLimit.has(request.callId)).length;
  const parallel = input.callSpec.parallelPolicy;
  if (branches > 1 && !parallel.allowed) findings.push({ class: 'tool.parallel_policy_violation', detail: `${branches} calls in one turn while parallel calls are not allowed` });
  if (branches > parallel.maxBranches) findings.push({ class: 'tool.parallel_policy_violation', detail: `${branches} calls exceed the limit of ${parallel.maxBranches}` });
  if (!input.callSpec.protocolStatePolicy.handled.includes(input.stopReason as never)) {
    findings.push({ class: 'protocol.stop_reason_unhandled', detail: `stop reason ${input.stopReason} is not handled by the protocol-state policy` });
  }
  if (findings.length > 0) return { ok: false, findings };
  return { ok: true, value: { turnId: input.turnId, joinDigest: joinDigestOf(input) } as JoinClosed };
};
