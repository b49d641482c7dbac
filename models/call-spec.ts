import * as z from 'zod';
import { DenialSource } from './permission.records.js';
import { StopReason } from './stop-reason.js';
import { lazySchema } from './lazy-schema.js';

export const ActionMode = lazySchema(() => z.enum(['code', 'json', 'text']));
export const ExecutionPattern = lazySchema(() => z.enum(['single', 'chain', 'route', 'parallel', 'orchestrator_workers', 'evaluator_optimizer']));
export const ToolChoice = lazySchema(() => z.enum(['auto', 'any', 'specific', 'none']));
export const RiskTier = lazySchema(() => z.enum(['low', 'moderate', 'high']));

/**
 * The typed contract of one model turn (harness-typestate §4.1). Digests are BLAKE3 over canonical JSON. Fields
 * for features rein does not have yet (defer/example/caller digests, eval and red-team gates, guardrail stages,
 * handoff contracts, observability mode) are absent; README lists them.
 */
export const CallSpec = lazySchema(() => z.object({
  callId: z.string().min(1),
  modelRef: z.object({ provider: z.string(), model: z.string() }),
  actionMode: ActionMode,
  executionPattern: ExecutionPattern,
  toolChoice: ToolChoice,
  /**
   * `allow`: the tools the model sees. `hidden`: tools of this agent that the policy hides this turn, by who hides
   * them (the mode, a tool-wide deny): a call to one is a denial the model reads, not an unknown tool.
   */
  toolPolicy: z.object({ allow: z.array(z.string()), schemaDigests: z.record(z.string(), z.string()), hidden: z.record(z.string(), DenialSource).optional() }),
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
  /**
   * The guardrail stages configured for this turn, in order (`pre_flight` → `input` → `output`), and their digest
   * (harness-typestate `guardrailStagePolicyDigest`); absent when no guardrail is configured.
   */
  guardrailStages: z.array(z.enum(['pre_flight', 'input', 'output'])).optional(),
  guardrailStagePolicyDigest: z.string().optional(),
}));
export type CallSpec = z.infer<typeof CallSpec>;

