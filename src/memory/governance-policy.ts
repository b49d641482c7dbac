import type { CandidateScope, CandidateSource, MemoryConfidence, MemoryKind, MemoryTtl } from '../../models/memory.records.js';

const day = 24 * 60 * 60 * 1000;

/** The longest a memory of each kind may go unverified (`reviewAfter`) and live (`expiresAt`), from approval. */
export const ttlCaps: Record<MemoryKind, { reviewAfterMs: number; expiresAfterMs: number }> = {
  project_fact: { reviewAfterMs: 30 * day, expiresAfterMs: 180 * day },
  task_experience: { reviewAfterMs: 14 * day, expiresAfterMs: 30 * day },
  user_preference: { reviewAfterMs: 90 * day, expiresAfterMs: 365 * day },
  procedure_rule: { reviewAfterMs: 30 * day, expiresAfterMs: 180 * day },
};

/** Weak sources (a tool's raw output, the model's reflection) never live longer than this. */
export const weakSourceExpiryMs = 30 * day;

/** Longest content a memory may hold (characters). */
export const maxMemoryContent = 2_000;

/** Source strength, strongest first (the reference's order; `repeated_pattern` is a verified observation seen in several sessions). */
export const sourceStrength: Record<CandidateSource['type'], number> = { explicit_user: 3, verified_observation: 2, tool_output: 1, agent_reflection: 0 };

/** The TTL governance assigns: the candidate's own, capped by its kind and source (shortened when it asked for more). */
export const governTtl = (kind: MemoryKind, source: CandidateSource['type'], requested: MemoryTtl | undefined, now: number): { ttl: Required<MemoryTtl>; shortened: boolean } => {
  const caps = ttlCaps[kind];
  const expiryCap = now + (sourceStrength[source] <= 1 ? Math.min(caps.expiresAfterMs, weakSourceExpiryMs) : caps.expiresAfterMs);
  const reviewCap = Math.min(now + caps.reviewAfterMs, expiryCap);
  const expiresAt = Math.min(requested?.expiresAt ?? expiryCap, expiryCap);
  const reviewAfter = Math.min(requested?.reviewAfter ?? reviewCap, reviewCap, expiresAt);
  const shortened = (requested?.expiresAt !== undefined && requested.expiresAt > expiryCap) || (requested?.reviewAfter !== undefined && requested.reviewAfter > reviewCap);
  return { ttl: { expiresAt, reviewAfter }, shortened };
};

/**
 * Confidence derived by the system, never taken from the proposer: a user's explicit statement is `medium`; a
 * verified observation is `low` once, `medium` when another session saw the same, `high` from three sessions on;
 * a tool's output or the model's reflection stays `low`. A person's approval lifts it to at least `medium`.
 */
export const deriveConfidence = (source: CandidateSource['type'], sessions: number, approvedByPerson: boolean): MemoryConfidence => {
  let derived: MemoryConfidence = 'low';
  if (source === 'explicit_user') derived = 'medium';
  else if (source === 'verified_observation') derived = sessions >= 3 ? 'high' : sessions === 2 ? 'medium' : 'low';
  if (approvedByPerson && derived === 'low') return 'medium';
  return derived;
};

/**
 * Scope check: a fact or experience learned from observations belongs to the repository it was seen in, never to
 * every workspace or to the user; a broader claim is narrowed to the repository. A user's own statement keeps the
 * scope they gave (user-level still goes to review).
 */
export const narrowScope = (scope: CandidateScope, kind: MemoryKind, source: CandidateSource['type'], repoKey: string): { scope: CandidateScope; narrowed: boolean } => {
  const broad = scope.level === 'user' || scope.level === 'workspace';
  const observed = kind === 'project_fact' || kind === 'task_experience';
  if (broad && observed && source !== 'explicit_user') return { scope: { level: 'repo', key: repoKey }, narrowed: true };
  return { scope, narrowed: false };
};

/** Content compared for sameness: whitespace collapsed, case folded. */
export const normalizeContent = (content: string): string => content.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();

/** True when two key lists share a key. */
export const sharesKey = (left: readonly string[] | undefined, right: readonly string[] | undefined): boolean => (left ?? []).some((key) => (right ?? []).includes(key));

/** Conflict keys (`<level>:<key>:<topic>`) moved with a candidate whose scope the review changed. */
export const rekey = (conflictKeys: readonly string[], from: CandidateScope, to: CandidateScope): string[] => {
  const prefix = `${from.level}:${from.key}:`;
  return conflictKeys.map((key) => (key.startsWith(prefix) ? `${to.level}:${to.key}:${key.slice(prefix.length)}` : key));
};
