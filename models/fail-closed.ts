import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * Fail-closed classes (harness-typestate §7). While any is present on a turn, projections may still be written but
 * no mutation (completing the session, promoting memory, merging a child's result, writing the governance store)
 * may happen. `enforcedClasses` lists the ones rein detects today; the rest guard features rein does not have yet.
 */
export const FailClosedClass = lazySchema(() => z.enum([
  'tool.schema_invalid',
  'tool.unknown_or_disallowed',
  'tool.discovery_mismatch',
  'tool.discovery_unresolved',
  'tool.example_digest_mismatch',
  'tool.caller_not_allowed',
  'tool.result_missing',
  'tool.result_orphan',
  'tool.join_incomplete',
  'tool.use_missing',
  'tool.use_unknown_result',
  'tool.use_without_result',
  'tool.parallel_policy_violation',
  'tool.programmatic_caller_edge_invalid',
  'tool.response_truncation_policy_violation',
  'protocol.stop_reason_unhandled',
  'protocol.parallel_transport_order_invalid',
  'runtime.shell_boundary_violation',
  'runtime.compaction_state_invalid',
  'context.queue_policy_violation',
  'context.injection_point_missing',
  'coordination.decomposition_policy_violation',
  'governance.policy_package_unpinned',
  'governance.policy_package_mismatch',
  'governance.guardrail_stage_missing',
  'governance.guardrail_stage_order_invalid',
  'governance.eval_gate_unmet',
  'governance.eval_lineage_missing',
  'governance.self_evolution_retry_missing',
  'governance.self_evolution_escalation_missing',
  'governance.self_evolution_rollback_missing',
  'governance.redteam_gate_unmet',
  'governance.trace_mode_violation',
  'governance.risk_tier_profile_missing',
  'handoff.required_artifact_missing',
  'handoff.target_not_allowed',
  'handoff.return_path_missing',
  'context.scope_violation',
  'mutation.policy_digest_mismatch',
  'mutation.capability_claim_missing',
  'mutation.use_evidence_missing',
]));
export type FailClosedClass = z.infer<typeof FailClosedClass>;

/** The classes with a detector in rein today (README lists every class and whether it is enforced). */
export const enforcedClasses: readonly FailClosedClass[] = [
  'tool.schema_invalid',
  'tool.unknown_or_disallowed',
  'tool.result_missing',
  'tool.result_orphan',
  'tool.join_incomplete',
  'tool.use_missing',
  'tool.use_unknown_result',
  'tool.use_without_result',
  'tool.parallel_policy_violation',
  'tool.response_truncation_policy_violation',
  'protocol.stop_reason_unhandled',
  'protocol.parallel_transport_order_invalid',
  'runtime.shell_boundary_violation',
  'governance.guardrail_stage_missing',
  'governance.guardrail_stage_order_invalid',
  'mutation.policy_digest_mismatch',
  'mutation.capability_claim_missing',
  'mutation.use_evidence_missing',
];

/** One detected class on one turn, with what triggered it. */
export const FailClosedFinding = lazySchema(() => z.object({
  class: FailClosedClass,
  detail: z.string(),
  callId: z.string().optional(),
}));
export type FailClosedFinding = z.infer<typeof FailClosedFinding>;
