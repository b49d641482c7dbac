import { z } from 'zod';

/** What a memory is about: a preference, a project fact, task experience, or a procedural rule. */
export const MemoryKind = z.enum(['user_preference', 'project_fact', 'task_experience', 'procedure_rule']);
export type MemoryKind = z.infer<typeof MemoryKind>;

export const MemoryConfidence = z.enum(['low', 'medium', 'high']);
export type MemoryConfidence = z.infer<typeof MemoryConfidence>;

/** Where a candidate is usable; `task` never reaches the governance store (a store record uses `module` instead). */
export const CandidateScope = z.object({ level: z.enum(['user', 'workspace', 'repo', 'branch', 'task']), key: z.string().min(1) });
export type CandidateScope = z.infer<typeof CandidateScope>;

export const MemoryScope = z.object({ level: z.enum(['user', 'workspace', 'repo', 'branch', 'module']), key: z.string().min(1) });
export type MemoryScope = z.infer<typeof MemoryScope>;

/** Why a candidate might be trusted, strongest first: the user said it, a verified observation, a tool, a reflection. */
export const CandidateSource = z.object({
  type: z.enum(['explicit_user', 'verified_observation', 'tool_output', 'agent_reflection']),
  eventIds: z.array(z.string()).min(1),
  artifactRefs: z.array(z.string()).optional(),
});
export type CandidateSource = z.infer<typeof CandidateSource>;

/** effect (fact) · a memory candidate entered the ledger; it starts `pending` and is never approved at creation. */
export const MemoryProposed = z.object({
  candidateId: z.string().min(1),
  content: z.string().min(1),
  kind: MemoryKind,
  scope: CandidateScope,
  source: CandidateSource,
  confidence: MemoryConfidence,
  ttl: z.object({ expiresAt: z.number().optional(), reviewAfter: z.number().optional() }).optional(),
  conflictKeys: z.array(z.string()),
  createdBy: z.enum(['runtime', 'model', 'user', 'reviewer']),
});
export type MemoryProposed = z.infer<typeof MemoryProposed>;

/** effect (fact) · governance checked a candidate: the outcome is a state transition, not a yes/no. */
export const MemoryReviewed = z.object({
  candidateId: z.string().min(1),
  outcome: z.enum(['approved', 'needs_review', 'rejected', 'downgraded']),
  reviewer: z.enum(['governance', 'user', 'reviewer']),
  reason: z.string(),
  /** A narrower scope or a rewritten statement decided by the review. */
  scope: CandidateScope.optional(),
  content: z.string().optional(),
  conflictsWith: z.array(z.string()).optional(),
});
export type MemoryReviewed = z.infer<typeof MemoryReviewed>;

/** effect (fact) · an approved candidate became a governance-store record (the only way into the store). */
export const MemoryPromoted = z.object({
  recordId: z.string().min(1),
  candidateId: z.string().min(1),
  content: z.string().min(1),
  kind: MemoryKind,
  scope: MemoryScope,
  confidence: MemoryConfidence,
  authority: z.enum(['hint', 'default', 'rule']),
  sourceRefs: z.array(z.string()).min(1),
  version: z.number().int().positive(),
  supersedes: z.array(z.string()).optional(),
  approvedAt: z.number(),
  lastVerifiedAt: z.number().optional(),
  expiresAt: z.number().optional(),
  reviewAfter: z.number().optional(),
});
export type MemoryPromoted = z.infer<typeof MemoryPromoted>;

/** effect (fact) · a candidate was rejected; nothing reaches the store. */
export const MemoryRejected = z.object({ candidateId: z.string().min(1), reason: z.string() });
export type MemoryRejected = z.infer<typeof MemoryRejected>;

/** effect (fact) · a store record was revoked ("forget that"): disabled for good, kept for audit. */
export const MemoryRevoked = z.object({ recordId: z.string().min(1), reason: z.string(), by: z.enum(['user', 'reviewer', 'governance']) });
export type MemoryRevoked = z.infer<typeof MemoryRevoked>;

/** effect (fact) · a store record (or a pending candidate) expired; it is no longer injected. */
export const MemoryExpired = z.object({ recordId: z.string().optional(), candidateId: z.string().optional(), reason: z.string() }).refine(
  (value) => value.recordId !== undefined || value.candidateId !== undefined,
  'memory.expired names a recordId or a candidateId',
);
export type MemoryExpired = z.infer<typeof MemoryExpired>;
