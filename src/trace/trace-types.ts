import type { SessionCaveat, UnresolvedFindings } from '../../models/session.records.js';
import type { TraceRef, TraceTurn } from '../projections/trace.view.js';

/** The trace document's failure classes (top level), plus `unknown_or_mixed` when evidence is incomplete. */
export type FailureCategory =
  | 'model_judgement_error'
  | 'context_missing'
  | 'tool_execution_error'
  | 'permission_misclassification'
  | 'observation_projection_error'
  | 'verification_missing'
  | 'delegation_join_error'
  | 'unknown_or_mixed';

/** Where along the responsibility chain a finding says the break is. */
export type Boundary =
  | 'goal'
  | 'tool intent'
  | 'permission'
  | 'execution'
  | 'observation'
  | 'context projection'
  | 'verification'
  | 'provider'
  | 'model judgement';

/** The finer finding types the analyzer's deterministic rules produce. */
export type FindingType =
  | 'missing_verification'
  | 'verification_stale'
  | 'verification_contradicted_final'
  | 'model_judgement_error'
  | 'context_projection_missing_fact'
  | 'observation_truncated_key_fact'
  | 'denial_ignored'
  | 'repeated_failed_call'
  | 'tool_execution_error'
  | 'permission_allow_without_rationale'
  | 'provider_failed'
  | 'unresolved_fail_closed'
  | 'reply_cut'
  | 'stop_hook_objection'
  | 'unknown_or_mixed';

/** One finding: what broke, where, the evidence (refs into the log and its artifacts), and where to repair it. */
export interface TraceFinding {
  type: FindingType;
  category: FailureCategory;
  boundary: Boundary;
  claim: string;
  evidence: string[];
  confidence: 'low' | 'medium' | 'high';
  suggestedFixArea: string;
  unknowns: string[];
  /** The seq the failure shows at. */
  seq: number;
  /** The key fact the finding is about, verbatim. */
  fact?: string;
  discoveredAt?: string;
  missingFrom?: string;
  /** For repeated calls: the call that was repeated. */
  call?: { name: string; arguments: Record<string, unknown> };
}

/**
 * How a session ended as the trace judges it: only a passing verification after the last change, with no
 * fail-closed finding left standing, is `succeeded`. A session that has not ended is `interrupted`, waits for a person
 (`awaiting-approval`, `awaiting-confirmation` of an in-doubt rerun), waits for a message (`idle`) or is `running`.
 */
export type TraceOutcome = 'succeeded' | 'unverified' | 'failed' | 'cancelled' | 'budget-exhausted' | 'forked' | 'interrupted' | 'awaiting-approval' | 'awaiting-confirmation' | 'idle' | 'running';

/** The analyzer's result: outcome, findings (primary first), the linked turns, and what it could not know. */
export interface TraceReport {
  sessionId: string;
  task: string;
  outcome: TraceOutcome;
  ended?: TraceRef & { status: string; reason?: string; unresolved?: UnresolvedFindings; caveats?: SessionCaveat[]; output?: unknown; outputErrors?: string[] };
  claimedSuccess: boolean;
  finalMessage?: TraceRef & { text: string };
  findings: TraceFinding[];
  primary?: TraceFinding;
  turns: TraceTurn[];
  /** Background commands whose end is recorded (`command.ended`), in log order: how each really ended. */
  backgroundEnds?: Array<TraceRef & { text: string }>;
  unknowns: string[];
  evalCandidate: boolean;
}

/** Reads a blob's text for the analyzer (read-only); undefined when it is missing. */
export type ReadText = (ref: string) => Promise<string | undefined>;

/** Where each category is repaired (the trace document's repair routes). */
export const repairRoutes: Record<FailureCategory, string> = {
  model_judgement_error: 'prompts, tool descriptions, few-shots, model choice, task decomposition',
  context_missing: 'context policy, retrieval, compaction, artifact projection, truncation strategy',
  tool_execution_error: 'tool runtime, sandbox, cwd, timeout, parameter schema',
  permission_misclassification: 'permission policy, risk classification, human in the loop',
  observation_projection_error: 'result normaliser, truncation strategy, summary template, error fidelity',
  verification_missing: 'verification plan, assertions, test commands, success criteria',
  delegation_join_error: 'task brief, result contract, join policy, review gate',
  unknown_or_mixed: 'collect the missing evidence first (context snapshots, raw outputs), then re-analyse',
};

/** Boundaries in the order the primary finding is chosen: harness boundaries along the chain, the model last. */
export const boundaryPrecedence: readonly Boundary[] = ['goal', 'tool intent', 'permission', 'execution', 'observation', 'context projection', 'verification', 'provider', 'model judgement'];
