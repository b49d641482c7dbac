import type { FailClosedFinding } from '../../models/fail-closed.js';
import type { CallSpec, ResultRow } from '../../models/turn.records.js';
import type { JoinClosed } from './join.js';

declare const mutationReadyBrand: unique symbol;

/**
 * Evidence that a mutation may rest on a turn: its join is closed, its policy digest is the active one, the
 * required capability claims are present, every failure row is well-formed and no fail-closed class is present.
 * Only `checkMutationReady` makes one, and only from a `JoinClosed`.
 */
export type MutationReady = { readonly turnId: string; readonly joinDigest: string; readonly mutationPolicyDigest: string; readonly [mutationReadyBrand]: true };

export interface MutationInput {
  join: JoinClosed;
  callSpec: CallSpec;
  activeMutationPolicyDigest: string;
  requiredClaims: readonly string[];
  rows: readonly ResultRow[];
  /** Classes found earlier in the turn (requests, results); any one refuses the mutation. */
  findings: readonly FailClosedFinding[];
}

export type MutationOutcome = { ok: true; value: MutationReady } | { ok: false; findings: FailClosedFinding[] };

/** Check the MutationReady obligations (harness-typestate §4.6); on success return the branded value. */
export const checkMutationReady = (input: MutationInput): MutationOutcome => {
  const findings: FailClosedFinding[] = [...input.findings];
  if (input.callSpec.mutationPolicyDigest !== input.activeMutationPolicyDigest) {
    findings.push({ class: 'mutation.policy_digest_mismatch', detail: `the turn ran under ${input.callSpec.mutationPolicyDigest}, the active policy is ${input.activeMutationPolicyDigest}` });
  }
  for (const claim of input.requiredClaims) {
    if (!input.callSpec.capabilityClaims.includes(claim)) findings.push({ class: 'mutation.capability_claim_missing', detail: `capability claim ${claim} is missing` });
  }
  for (const row of input.rows) {
    if (row.status === 'error' && (!row.errorCode || row.retryable === undefined || !row.errorMessageDigest)) {
      findings.push({ class: 'mutation.use_evidence_missing', detail: `failure row of ${row.callId} lacks errorCode, retryable or errorMessageDigest`, callId: row.callId });
    }
  }
  if (findings.length > 0) return { ok: false, findings };
  return { ok: true, value: { turnId: input.join.turnId, joinDigest: input.join.joinDigest, mutationPolicyDigest: input.activeMutationPolicyDigest } as MutationReady };
};
