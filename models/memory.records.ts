import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** What a memory is about: a preference, a project fact, task experience, or a procedural rule. */
export const MemoryKind = lazySchema(() => z.enum(['user_preference', 'project_fact', 'task_experience', 'procedure_rule']));
export type MemoryKind = z.infer<typeof MemoryKind>;

export const MemoryConfidence = lazySchema(() => z.enum(['low', 'medium', 'high']));
export type MemoryConfidence = z.infer<typeof MemoryConfidence>;

/** How strongly a store record speaks when injected: a weak hint, a default tendency, or a rule. */
export const MemoryAuthority = lazySchema(() => z.enum(['hint', 'default', 'rule']));
export type MemoryAuthority = z.infer<typeof MemoryAuthority>;

/** Where a candidate is usable; `task` never reaches the governance store (a store record uses `module` instead). */
export const CandidateScope = lazySchema(() => z.object({ level: z.enum(['user', 'workspace', 'repo', 'branch', 'task']), key: z.string().min(1) }));
export type CandidateScope = z.infer<typeof CandidateScope>;

export const MemoryScope = lazySchema(() => z.object({ level: z.enum(['user', 'workspace', 'repo', 'branch', 'module']), key: z.string().min(1) }));
export type MemoryScope = z.infer<typeof MemoryScope>;

/** Why a candidate might be trusted, strongest first: the user said it, a verified observation, a tool, a reflection. */
export const CandidateSource = lazySchema(() => z.object({
  type: z.enum(['explicit_user', 'verified_observation', 'tool_output', 'agent_reflection']),
  eventIds: z.array(z.string()).min(1),
  artifactRefs: z.array(z.string()).optional(),
}));
export type CandidateSource = z.infer<typeof CandidateSource>;

/** When a memory must be re-verified (`reviewAfter`) and when it stops being used (`expiresAt`), epoch ms. */
export const MemoryTtl = lazySchema(() => z.object({ expiresAt: z.number().optional(), reviewAfter: z.number().optional() }));
export type MemoryTtl = z.infer<typeof MemoryTtl>;

/**
 * effect (fact) · the workspace's memory could not be read for this session (its governance stream is damaged, or
 * unreadable for another reason): from here on the session runs without memory — nothing is injected, `memory_read`
 * reports it unavailable, the end-of-session pass leaves the damaged stream alone — and the model still answers.
 * `code` is the store's error code (`STORE_CORRUPT_RECORD`, …). Written once per session, with the model call it
 * was found at.
 */
export const MemoryUnavailable = lazySchema(() => z.object({ code: z.string().min(1), message: z.string() }));
export type MemoryUnavailable = z.infer<typeof MemoryUnavailable>;

/** effect (fact) · a memory candidate entered the ledger; it starts `pending` and is never approved at creation. */
export const MemoryProposed = lazySchema(() => z.object({
  candidateId: z.string().min(1),
  content: z.string().min(1),
  kind: MemoryKind,
  scope: CandidateScope,
  source: CandidateSource,
  confidence: MemoryConfidence,
  ttl: MemoryTtl.optional(),
  conflictKeys: z.array(z.string()),
  createdBy: z.enum(['runtime', 'model', 'user', 'reviewer']),
  /** The kind of task it was learned in (`test-fix`, …); retrieval may filter by it. */
  taskType: z.string().min(1).optional(),
}));
export type MemoryProposed = z.infer<typeof MemoryProposed>;

/**
 * effect (fact, governance stream) · a session's candidate was handed to governance: the ledger row as its session
 * recorded it, so the governance stream alone holds the review queue and the evidence later candidates are
 * compared with. Written once per candidate, in the same batch as its first review.
 */
export const MemorySubmitted = lazySchema(() => z.object({
  sessionId: z.string().min(1),
  /** The id of the `memory.proposed` record in that session. */
  proposalId: z.string().min(1),
  proposedAt: z.number(),
  candidate: MemoryProposed,
}));
export type MemorySubmitted = z.infer<typeof MemorySubmitted>;

/** What the review adjusted: the scope narrowed, the TTL shortened. */
export const ReviewAdjustment = lazySchema(() => z.enum(['narrowed_scope', 'shortened_ttl']));
export type ReviewAdjustment = z.infer<typeof ReviewAdjustment>;

/** The MutationReady gate of a candidate's source turns, as the review saw it. */
export const GateEvidence = lazySchema(() => z.object({
  status: z.enum(['mutation-ready', 'blocked', 'open', 'no-turn']),
  turns: z.array(z.string()),
  reason: z.string().optional(),
}));
export type GateEvidence = z.infer<typeof GateEvidence>;

/**
 * effect (fact) · governance (or a person) checked a candidate: the outcome is a state transition, not a yes/no —
 * `approved`, `rejected`, `waiting` (for more evidence), `needs_review` (a person must decide), or the legacy
 * `downgraded`. Adjustments (narrowed scope, shortened TTL) and the derived confidence travel with it.
 */
export const MemoryReviewed = lazySchema(() => z.object({
  candidateId: z.string().min(1),
  outcome: z.enum(['approved', 'needs_review', 'rejected', 'downgraded', 'waiting']),
  reviewer: z.enum(['governance', 'user', 'reviewer']),
  reason: z.string(),
  /** A narrower scope or a rewritten statement decided by the review. */
  scope: CandidateScope.optional(),
  content: z.string().optional(),
  conflictsWith: z.array(z.string()).optional(),
  /** Confidence derived by the system (source, evidence count, conflicts); never the model's word. */
  confidence: MemoryConfidence.optional(),
  ttl: MemoryTtl.optional(),
  adjustments: z.array(ReviewAdjustment).optional(),
  /** Risk classes that put the candidate in front of a person (`permission`, `credential`, `procedural`, …). */
  risks: z.array(z.string()).optional(),
  gate: GateEvidence.optional(),
  /** Candidates of other sessions that observed the same thing. */
  corroboratedBy: z.array(z.string()).optional(),
}));
export type MemoryReviewed = z.infer<typeof MemoryReviewed>;

/** effect (fact, governance stream) · an approved candidate became a store record (the only way into the store). */
export const MemoryPromoted = lazySchema(() => z.object({
  recordId: z.string().min(1),
  candidateId: z.string().min(1),
  content: z.string().min(1),
  kind: MemoryKind,
  scope: MemoryScope,
  confidence: MemoryConfidence,
  authority: MemoryAuthority,
  sourceRefs: z.array(z.string()).min(1),
  version: z.number().int().positive(),
  supersedes: z.array(z.string()).optional(),
  approvedAt: z.number(),
  lastVerifiedAt: z.number().optional(),
  expiresAt: z.number().optional(),
  reviewAfter: z.number().optional(),
  /** The candidate's conflict keys (`<level>:<key>:<topic>`): health checks and later candidates compare them. */
  conflictKeys: z.array(z.string()).optional(),
  /** Other candidates whose evidence this record also rests on; they become `approved` with it. */
  corroboratedBy: z.array(z.string()).optional(),
  taskType: z.string().min(1).optional(),
}));
export type MemoryPromoted = z.infer<typeof MemoryPromoted>;

/** effect (fact) · a candidate was rejected; nothing reaches the store. */
export const MemoryRejected = lazySchema(() => z.object({ candidateId: z.string().min(1), reason: z.string(), by: z.enum(['governance', 'user', 'reviewer']).optional() }));
export type MemoryRejected = z.infer<typeof MemoryRejected>;

/** effect (fact) · a store record was revoked ("forget that"): disabled for good, kept for audit. */
export const MemoryRevoked = lazySchema(() => z.object({ recordId: z.string().min(1), reason: z.string(), by: z.enum(['user', 'reviewer', 'governance']) }));
export type MemoryRevoked = z.infer<typeof MemoryRevoked>;

/** effect (fact) · a store record (or a pending candidate) expired; it is no longer injected. */
export const MemoryExpired = lazySchema(() => z.object({ recordId: z.string().optional(), candidateId: z.string().optional(), reason: z.string() }).refine(
  (value) => value.recordId !== undefined || value.candidateId !== undefined,
  'memory.expired names a recordId or a candidateId',
));
export type MemoryExpired = z.infer<typeof MemoryExpired>;
