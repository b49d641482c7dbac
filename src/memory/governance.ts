import type { CandidateScope, GateEvidence, MemoryAuthority, MemoryConfidence, MemoryProposed, MemoryTtl, ReviewAdjustment } from '../../models/memory.records.js';
import { getIn, valuesOf } from '../projections/persistent-map.js';
import type { MemoryRecordState, MemoryView } from '../projections/memory.view.js';
import { deriveConfidence, governTtl, maxMemoryContent, narrowScope, normalizeContent, rekey, sharesKey } from './governance-policy.js';
import type { PromotionGateOutcome } from './promotion-gate.js';
import { classifyMemoryRisks, type MemoryRisk } from './risk-classifier.js';
import { mutableStateOf } from './mutable-state.js';

/** What governance decides about one candidate. */
export interface GovernanceInput {
  candidate: MemoryProposed;
  /** The session the candidate was proposed in. */
  sessionId: string;
  /** The governance stream's view: other sessions' candidates and the store records. */
  view: MemoryView;
  /** The MutationReady gate of the candidate's source turns. */
  gate: PromotionGateOutcome;
  /** The repository key a too-broad observation is narrowed to. */
  repoKey: string;
  now: number;
  /** `governance` decides alone; `user` is a person approving it (`rein memory approve`). */
  reviewer: 'governance' | 'user';
  /** A person's rewrite: a narrower statement or another scope. */
  rewrite?: { content?: string; scope?: CandidateScope };
}

/** The outcome (a state transition) and everything promotion needs. */
export interface GovernanceDecision {
  outcome: 'approved' | 'rejected' | 'waiting' | 'needs_review';
  reason: string;
  risks: MemoryRisk[];
  content: string;
  scope: CandidateScope;
  confidence: MemoryConfidence;
  authority: MemoryAuthority;
  ttl: Required<MemoryTtl>;
  adjustments: ReviewAdjustment[];
  /** Active records under a shared conflict key that say something else (never silently overwritten). */
  conflictsWith: string[];
  /** Active records that say the same (a new version supersedes them). */
  sameAs: string[];
  /**
   * Active records under a shared conflict key that report mutable state (`Verified here: … passed`): never a durable
   * fact, so never a conflict either — a promotion supersedes them.
   */
  stale: string[];
  /** Candidates of other sessions with the same verified observation. */
  corroboratedBy: string[];
  /** The candidate's conflict keys, moved to the decided scope. */
  conflictKeys: string[];
  gate: GateEvidence;
}

const sessionsBehind = (view: MemoryView, candidateIds: readonly string[]): string[] =>
  candidateIds.flatMap((id) => {
    const sessionId = getIn(view.candidates, id)?.sessionId;
    return sessionId ? [sessionId] : [];
  });

const confidenceRank: readonly MemoryConfidence[] = ['low', 'medium', 'high'];
const authorityRank: readonly MemoryAuthority[] = ['hint', 'default', 'rule'];
const atLeast = <Level extends string>(rank: readonly Level[], current: Level, floor: Level): Level => (rank.indexOf(floor) > rank.indexOf(current) ? floor : current);

/**
 * Govern one candidate (source → scope → confidence → TTL → conflicts → review gate). Pure. Outcomes: `rejected`
 * (bad metadata, task scope, a blocked source turn), `waiting` (an open source turn; a single verified
 * observation waiting for a second session), `needs_review` (any risk, a conflict with an active record, content a
 * person revoked before, a claim only the model makes), `approved` (a user's explicit statement without risk,
 * a verified observation seen in two sessions, an episodic `task_experience` backed by tool output — the
 * low-weight tier). A person's approval satisfies the review but never the metadata, scope or gate checks.
 */
export const governCandidate = (input: GovernanceInput): GovernanceDecision => {
  const { candidate, view, now } = input;
  const byPerson = input.reviewer === 'user';
  const content = (input.rewrite?.content ?? candidate.content).trim();
  const narrowed = input.rewrite?.scope ? { scope: input.rewrite.scope, narrowed: false } : narrowScope(candidate.scope, candidate.kind, candidate.source.type, input.repoKey);
  const scope = narrowed.scope;
  const { ttl, shortened } = governTtl(candidate.kind, candidate.source.type, candidate.ttl, now);
  const adjustments: ReviewAdjustment[] = [...(narrowed.narrowed ? (['narrowed_scope'] as const) : []), ...(shortened ? (['shortened_ttl'] as const) : [])];
  const risks = classifyMemoryRisks({ content, kind: candidate.kind, scope });
  const conflictKeys = rekey(candidate.conflictKeys, candidate.scope, scope);

  const normalized = normalizeContent(content);
  const active: MemoryRecordState[] = [];
  const stale: string[] = [];
  const revokedBefore: string[] = [];
  for (const record of valuesOf(view.records)) {
    if (record.status === 'active' && sharesKey(record.conflictKeys, conflictKeys)) {
      if (mutableStateOf(record.content)) stale.push(record.recordId);
      else active.push(record);
    }
    else if (record.status === 'revoked' && normalizeContent(record.content) === normalized) revokedBefore.push(record.recordId);
  }
  const sameAs = active.filter((record) => normalizeContent(record.content) === normalized).map((record) => record.recordId).sort();
  const conflictsWith = active.filter((record) => normalizeContent(record.content) !== normalized).map((record) => record.recordId).sort();
  // Proposals are compared as proposed (both sides' original conflict keys).
  const corroboratedBy = candidate.source.type !== 'verified_observation' ? [] : valuesOf(view.candidates)
    .filter((other) => other.candidateId !== candidate.candidateId && other.sessionId !== undefined && other.sessionId !== input.sessionId && other.source.type === 'verified_observation' && other.status === 'pending' && normalizeContent(other.content) === normalized && (candidate.conflictKeys.length === 0 || sharesKey(other.conflictKeys, candidate.conflictKeys)))
    .map((other) => other.candidateId)
    .sort();
  // The same statement on record already: its sessions count again (read from its sources, which every version
  // carries forward), and what it reached is kept — a fact verified again never loses confidence or authority.
  const same = active.filter((record) => sameAs.includes(record.recordId));
  const earlier = same.flatMap((record) => [record.candidateId, ...(record.corroboratedBy ?? [])]);
  const recordedSessions = same.flatMap((record) => record.sourceRefs.map((ref) => ref.slice(0, ref.lastIndexOf('#'))).filter((sessionId) => sessionId !== ''));
  const sessions = new Set([input.sessionId, ...sessionsBehind(view, [...corroboratedBy, ...earlier]), ...recordedSessions]).size;
  const confidence = same.reduce((highest, record) => atLeast(confidenceRank, highest, record.confidence), deriveConfidence(candidate.source.type, sessions, byPerson));
  const derivedAuthority: MemoryAuthority = byPerson
    ? candidate.source.type === 'explicit_user' && candidate.kind === 'procedure_rule' ? 'rule' : 'default'
    : candidate.source.type === 'explicit_user' || confidence === 'high' ? 'default' : 'hint';
  const authority = same.reduce((highest, record) => atLeast(authorityRank, highest, record.authority), derivedAuthority);
  const decided = (outcome: GovernanceDecision['outcome'], reason: string): GovernanceDecision => ({
    outcome, reason, risks, content, scope, confidence, authority, ttl, adjustments, conflictsWith, sameAs, stale: stale.sort(), corroboratedBy, conflictKeys, gate: input.gate.evidence,
  });

  if (content === '' || content.length > maxMemoryContent) return decided('rejected', `content must be 1-${maxMemoryContent} characters`);
  if (candidate.source.eventIds.length === 0 || scope.key.trim() === '') return decided('rejected', 'a candidate needs a scope key and at least one source event');
  if (scope.level === 'task') return decided('rejected', 'task-scoped: it does not outlive its session, so there is nothing to keep');
  if (!input.gate.ok) return decided(input.gate.verdict === 'wait' ? 'waiting' : 'rejected', input.gate.reason);
  if (byPerson) return decided('approved', conflictsWith.length > 0 ? `approved by a person; supersedes the conflicting ${conflictsWith.join(', ')}` : 'approved by a person');
  // A test result, what a file holds now: true when observed, not a fact a later session may rely on.
  const mutable = mutableStateOf(content);
  if (mutable) return decided(candidate.source.type === 'explicit_user' ? 'needs_review' : 'rejected', `an observation of mutable state (${mutable}) is not a durable fact: the next run may find otherwise${candidate.source.type === 'explicit_user' ? '; only a person may keep it' : ''}`);

  if (risks.length > 0) return decided('needs_review', `needs a person: ${risks.join(', ')}`);
  if (conflictsWith.length > 0) return decided('needs_review', `conflicts with the active ${conflictsWith.join(', ')} under a shared conflict key; never overwritten silently`);
  if (revokedBefore.length > 0) return decided('needs_review', `the same content was revoked before (${revokedBefore.join(', ')}); only a person may bring it back`);
  switch (candidate.source.type) {
    case 'explicit_user':
      return decided('approved', 'the user said it explicitly, with no risk');
    case 'verified_observation':
      if (sameAs.length > 0) return decided('approved', `verified again; a new version of ${sameAs.join(', ')}`);
      if (corroboratedBy.length > 0) return decided('approved', `verified in ${sessions} sessions`);
      return decided('waiting', 'one verified observation: waiting for the same observation in another session');
    case 'tool_output':
      if (candidate.kind === 'task_experience') return decided('approved', 'episodic experience backed by tool output: kept as a low-confidence hint, never injected proactively');
      return decided('needs_review', 'a claim the model drew from tool output needs a person');
    default:
      return decided('needs_review', 'the model\'s own reflection needs a person');
  }
};
