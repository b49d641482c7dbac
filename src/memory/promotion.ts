import { randomBytes } from 'node:crypto';
import type { MemoryPromoted, MemoryProposed, MemoryScope } from '../../models/memory.records.js';
import { getIn } from '../projections/persistent-map.js';
import type { MemoryView } from '../projections/memory.view.js';
import type { GovernanceDecision } from './governance.js';
import { MemoryError } from './memory-errors.js';
import type { PromotionReady } from './promotion-gate.js';

declare const promotionBrand: unique symbol;

/** A `memory.promoted` draft only `promoteCandidate` makes; the governance log appends no other. */
export type Promotion = { readonly type: 'memory.promoted'; readonly data: MemoryPromoted; readonly [promotionBrand]: true };

const minted = new WeakSet<object>();

/** True for a promotion `promoteCandidate` made (the governance log refuses any other `memory.promoted`). */
export const isPromotion = (value: unknown): value is Promotion => typeof value === 'object' && value !== null && minted.has(value);

/** The sources a record keeps: the newest first, so a fact verified in many sessions stays a bounded record. */
const maxSourceRefs = 64;

/** A fresh store record id such as `m-3f9a1c2b7d10`. */
export const newMemoryRecordId = (): string => `m-${randomBytes(6).toString('hex')}`;

/** Where a source event lives: `<sessionId>#<recordId>` (a record of that session's stream). */
export const sourceRefOf = (sessionId: string, recordId: string): string => `${sessionId}#${recordId}`;

/**
 * Promote an approved candidate into a store record (MG-1: the only way into the governance store). Requires the
 * decision to be `approved` and the MutationReady gate's `PromotionReady` (promotion is a mutation). Builds a new
 * version over every active record it supersedes (the same content verified again; for a person's approval, the
 * conflicting ones too; records under its conflict keys that report mutable state) with the candidate's sources (and those of candidates corroborating it) as `sourceRefs`.
 * Raises `MEMORY_CANDIDATE_INVALID` for a decision that is not an approval. Pure apart from the record id.
 */
export const promoteCandidate = (input: {
  candidate: MemoryProposed;
  sessionId: string;
  decision: GovernanceDecision;
  ready: PromotionReady;
  view: MemoryView;
  now: number;
  recordId?: string;
}): Promotion => {
  const { candidate, decision, view } = input;
  if (decision.outcome !== 'approved') throw new MemoryError('MEMORY_CANDIDATE_INVALID', `candidate ${candidate.candidateId} was not approved (${decision.outcome}: ${decision.reason})`);
  if (decision.scope.level === 'task') throw new MemoryError('MEMORY_CANDIDATE_INVALID', `candidate ${candidate.candidateId} is task-scoped`);
  const supersedes = [...new Set([...decision.sameAs, ...decision.conflictsWith, ...decision.stale])].sort();
  const version = supersedes.reduce((highest, id) => Math.max(highest, getIn(view.records, id)?.version ?? 0), 0) + 1;
  const sourceRefs = [
    ...candidate.source.eventIds.map((id) => sourceRefOf(input.sessionId, id)),
    ...decision.corroboratedBy.flatMap((id) => {
      const other = getIn(view.candidates, id);
      return other?.sessionId ? other.source.eventIds.map((eventId) => sourceRefOf(other.sessionId!, eventId)) : [];
    }),
    // A new version of the same statement keeps the evidence behind the versions it supersedes (not a conflict's).
    ...decision.sameAs.flatMap((id) => getIn(view.records, id)?.sourceRefs ?? []),
  ];
  const data: MemoryPromoted = {
    recordId: input.recordId ?? newMemoryRecordId(),
    candidateId: candidate.candidateId,
    content: decision.content,
    kind: candidate.kind,
    scope: decision.scope as MemoryScope,
    confidence: decision.confidence,
    authority: decision.authority,
    sourceRefs: [...new Set(sourceRefs)].slice(0, maxSourceRefs),
    version,
    ...(supersedes.length > 0 ? { supersedes } : {}),
    approvedAt: input.now,
    ...(candidate.source.type === 'verified_observation' ? { lastVerifiedAt: input.now } : {}),
    expiresAt: decision.ttl.expiresAt,
    reviewAfter: decision.ttl.reviewAfter,
    conflictKeys: [...decision.conflictKeys],
    ...(decision.corroboratedBy.length > 0 ? { corroboratedBy: [...decision.corroboratedBy] } : {}),
    ...(candidate.taskType ? { taskType: candidate.taskType } : {}),
  };
  const promotion = Object.freeze({ type: 'memory.promoted' as const, data }) as Promotion;
  minted.add(promotion);
  return promotion;
};
