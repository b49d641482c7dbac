import { z } from 'zod';
import { FailClosedFinding } from './fail-closed.js';
import { StopReason } from './model.records.js';

export const ActionMode = z.enum(['code', 'json', 'text']);
export const ExecutionPattern = z.enum(['single', 'chain', 'route', 'parallel', 'orchestrator_workers', 'evaluator_optimizer']);
export const ToolChoice = z.enum(['auto', 'any', 'specific', 'none']);
export const RiskTier = z.enum(['low', 'moderate', 'high']);

/**
 * The typed contract of one model turn (harness-typestate §4.1). Digests are BLAKE3 over canonical JSON. Fields
 * for features rein does not have yet (defer/example/caller digests, eval and red-team gates, guardrail stages,
 * handoff contracts, observability mode) are absent; README lists them.
 */
export const CallSpec = z.object({
  callId: z.string().min(1),
  modelRef: z.object({ provider: z.string(), model: z.string() }),
  actionMode: ActionMode,
  executionPattern: ExecutionPattern,
  toolChoice: ToolChoice,
  toolPolicy: z.object({ allow: z.array(z.string()), schemaDigests: z.record(z.string(), z.string()) }),
  toolCatalogDigest: z.string(),
  parallelPolicy: z.object({ allowed: z.boolean(), maxBranches: z.number().int().positive(), strictOrder: z.boolean() }),
  toolResponseTruncationPolicy: z.object({ maxChars: z.number().int().positive(), marker: z.string(), artifactRequired: z.boolean() }),
  runtimeSandboxRef: z.string(),
  riskTier: RiskTier,
  mutationPolicyDigest: z.string(),
  capabilityClaims: z.array(z.string()),
  stopPolicy: z.object({ maxTurns: z.number().int().positive(), checkpoints: z.array(z.string()) }),
  protocolStatePolicy: z.object({ handled: z.array(StopReason), continueOn: z.array(StopReason) }),
  normalizerId: z.string().optional(),
});
export type CallSpec = z.infer<typeof CallSpec>;

/** One tool request of a turn, as the witness records it (arguments by digest only). */
export const RequestRow = z.object({ callId: z.string(), name: z.string(), argumentsDigest: z.string() });
export type RequestRow = z.infer<typeof RequestRow>;

/** Where a tool result came from: the runtime boundary evidence (shell rows must carry workdir and sandbox). */
export const Provenance = z.object({
  route: z.string(),
  workdir: z.string().optional(),
  sandboxProfile: z.string().optional(),
  commandDigest: z.string().optional(),
});
export type Provenance = z.infer<typeof Provenance>;

/** One terminal tool result row: typed success or failure with the machine-readable failure envelope. */
export const ResultRow = z.object({
  callId: z.string(),
  name: z.string(),
  status: z.enum(['ok', 'error']),
  errorCode: z.string().optional(),
  retryable: z.boolean().optional(),
  errorMessageDigest: z.string().optional(),
  outputDigest: z.string(),
  provenance: Provenance.optional(),
  truncation: z.object({ omittedBytes: z.number().int().nonnegative(), artifact: z.string() }).optional(),
  observationChars: z.number().int().nonnegative(),
});
export type ResultRow = z.infer<typeof ResultRow>;

export const UseDisposition = z.enum(['consumed', 'observed_only', 'discarded_with_reason', 'retry_scheduled']);
export type UseDisposition = z.infer<typeof UseDisposition>;

/** What became of one terminal result: fed into a synthesis (`ref`), only observed, discarded (typed reason), retried. */
export const UseRow = z.object({
  callId: z.string(),
  disposition: UseDisposition,
  ref: z.string().optional(),
  reason: z.enum(['cancelled', 'superseded', 'context_budget', 'policy']).optional(),
});
export type UseRow = z.infer<typeof UseRow>;

/** effect (derived) · witness: the turn's CallSpec and its digest. */
export const TurnCallSpec = z.object({ turnId: z.string(), callSpec: CallSpec, digest: z.string() });
/** effect (derived) · witness: the requests and their order-insensitive multiset digest. */
export const TurnRequests = z.object({ turnId: z.string(), requests: z.array(RequestRow), multisetDigest: z.string() });
/** effect (derived) · witness: one terminal result per request, and their digest. */
export const TurnResults = z.object({ turnId: z.string(), rows: z.array(ResultRow), digest: z.string() });
/** effect (derived) · witness: the disposition of every result, and their digest. */
export const TurnUses = z.object({ turnId: z.string(), uses: z.array(UseRow), digest: z.string() });
/** effect (derived) · witness: the join closed; the digest covers requests, results and uses. */
export const TurnJoinClosed = z.object({ turnId: z.string(), joinDigest: z.string() });
/** effect (derived) · witness: every mutation obligation holds for this turn. */
export const TurnMutationReady = z.object({ turnId: z.string(), joinDigest: z.string(), mutationPolicyDigest: z.string() });
/** effect (derived) · witness: fail-closed classes found on this turn; mutations are refused. */
export const TurnBlocked = z.object({ turnId: z.string(), stage: z.string(), joinClosed: z.boolean(), findings: z.array(FailClosedFinding) });
