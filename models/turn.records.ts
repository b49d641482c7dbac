import * as z from 'zod';
import { FailClosedFinding } from './fail-closed.js';
import { CallSpec } from './call-spec.js';
import { lazySchema } from './lazy-schema.js';

export { ActionMode, CallSpec, ExecutionPattern, RiskTier, ToolChoice } from './call-spec.js';

/** One tool request of a turn, as the witness records it (arguments by digest only). */
export const RequestRow = lazySchema(() => z.object({ callId: z.string(), name: z.string(), argumentsDigest: z.string() }));
export type RequestRow = z.infer<typeof RequestRow>;

/** Where a tool result came from: the runtime boundary evidence (shell rows must carry workdir and sandbox). */
export const Provenance = lazySchema(() => z.object({
  route: z.string(),
  workdir: z.string().optional(),
  sandboxProfile: z.string().optional(),
  commandDigest: z.string().optional(),
}));
export type Provenance = z.infer<typeof Provenance>;

/** One guardrail stage's verdict on one call, in the order the stages ran (the turn checks stage presence and order). */
export const GuardrailEvidence = lazySchema(() => z.object({ stage: z.enum(['pre_flight', 'input', 'output']), verdict: z.enum(['pass', 'block']), by: z.string().optional() }));
export type GuardrailEvidence = z.infer<typeof GuardrailEvidence>;

/** One terminal tool result row: typed success or failure with the machine-readable failure envelope. */
export const ResultRow = lazySchema(() => z.object({
  callId: z.string(),
  name: z.string(),
  status: z.enum(['ok', 'error']),
  errorCode: z.string().optional(),
  retryable: z.boolean().optional(),
  errorMessageDigest: z.string().optional(),
  outputDigest: z.string(),
  provenance: Provenance.optional(),
  truncation: z.object({ omittedBytes: z.number().int().nonnegative(), artifact: z.string() }).optional(),
  /** The pipeline stage that refused a call that never ran (`schema` makes it `tool.schema_invalid`). */
  failedStage: z.string().optional(),
  /** The guardrail stages this call passed through, in order (present only where guardrails are configured). */
  guardrails: z.array(GuardrailEvidence).optional(),
  observationChars: z.number().int().nonnegative(),
}));
export type ResultRow = z.infer<typeof ResultRow>;

export const UseDisposition = lazySchema(() => z.enum(['consumed', 'observed_only', 'discarded_with_reason', 'retry_scheduled']));
export type UseDisposition = z.infer<typeof UseDisposition>;

/** What became of one terminal result: fed into a synthesis (`ref`), only observed, discarded (typed reason), retried. */
export const UseRow = lazySchema(() => z.object({
  callId: z.string(),
  disposition: UseDisposition,
  ref: z.string().optional(),
  reason: z.enum(['cancelled', 'superseded', 'context_budget', 'policy']).optional(),
}));
export type UseRow = z.infer<typeof UseRow>;

/**
 * effect (derived) · witness: the turn's CallSpec and its digest. In a step record the CallSpec itself is left out (it
 * is the `callSpec` of the `model.responded` that opened the turn); the digest stays.
 */
export const TurnCallSpec = lazySchema(() => z.object({ turnId: z.string(), callSpec: CallSpec.optional(), digest: z.string() }));
/** effect (derived) · witness: the requests and their order-insensitive multiset digest (the rows left out in a step record). */
export const TurnRequests = lazySchema(() => z.object({ turnId: z.string(), requests: z.array(RequestRow).optional(), multisetDigest: z.string() }));
/** effect (derived) · witness: one terminal result per request, and their digest (the rows left out in a step record). */
export const TurnResults = lazySchema(() => z.object({ turnId: z.string(), rows: z.array(ResultRow).optional(), digest: z.string() }));
/** effect (derived) · witness: the disposition of every result, and their digest (the rows left out in a step record). */
export const TurnUses = lazySchema(() => z.object({ turnId: z.string(), uses: z.array(UseRow).optional(), digest: z.string() }));
/** effect (derived) · witness: the join closed; the digest covers requests, results and uses. */
export const TurnJoinClosed = lazySchema(() => z.object({ turnId: z.string(), joinDigest: z.string() }));
/** effect (derived) · witness: every mutation obligation holds for this turn. */
export const TurnMutationReady = lazySchema(() => z.object({ turnId: z.string(), joinDigest: z.string(), mutationPolicyDigest: z.string() }));
/** effect (derived) · witness: fail-closed classes found on this turn; mutations are refused. */
export const TurnBlocked = lazySchema(() => z.object({ turnId: z.string(), stage: z.string(), joinClosed: z.boolean(), findings: z.array(FailClosedFinding) }));
