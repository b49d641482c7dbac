import type { RecordEnvelope } from '../../models/envelope.js';
import type { MemoryProposed, MemoryReviewed, MemorySubmitted } from '../../models/memory.records.js';
import { getIn, valuesOf } from '../projections/persistent-map.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { contradictedBy } from './mutable-state.js';
import { memoryProjection, type MemoryView } from '../projections/memory.view.js';
import type { GovernanceDraft } from './governance-log.js';
import { governCandidate, type GovernanceDecision } from './governance.js';
import { checkPromotionGate, type PromotionGateOutcome } from './promotion-gate.js';
import { promoteCandidate } from './promotion.js';
import { sourceTurnsOf, turnEvidenceOf, unverifiedSourcesOf, type TurnEvidence } from './turn-evidence.js';

/** The `memory.reviewed` data of a decision. */
export const reviewOf = (candidateId: string, decision: GovernanceDecision, reviewer: MemoryReviewed['reviewer'], original: MemoryProposed): MemoryReviewed => ({
  candidateId,
  outcome: decision.outcome,
  reviewer,
  reason: decision.reason,
  ...(decision.scope.level !== original.scope.level || decision.scope.key !== original.scope.key ? { scope: decision.scope } : {}),
  ...(decision.content !== original.content ? { content: decision.content } : {}),
  ...(decision.conflictsWith.length > 0 ? { conflictsWith: decision.conflictsWith } : {}),
  confidence: decision.confidence,
  ttl: decision.ttl,
  ...(decision.adjustments.length > 0 ? { adjustments: decision.adjustments } : {}),
  ...(decision.risks.length > 0 ? { risks: decision.risks } : {}),
  gate: decision.gate,
  ...(decision.corroboratedBy.length > 0 ? { corroboratedBy: decision.corroboratedBy } : {}),
});

/** The gate of one candidate of a session, from the session's evidence. */
export const gateOf = (evidence: TurnEvidence, candidate: MemoryProposed): PromotionGateOutcome =>
  checkPromotionGate({ sourceTurns: sourceTurnsOf(evidence, candidate.candidateId, candidate.source.eventIds), turns: evidence.turns, sessionEnded: evidence.ended, unverifiedSources: unverifiedSourcesOf(evidence, candidate) });

/** The commands whose last run in these records failed (`verification.recorded`, any agent). */
export const failedCommandsOf = (records: readonly RecordEnvelope[]): Set<string> => {
  const last = new Map<string, string>();
  for (const record of records) {
    if (record.type !== 'verification.recorded') continue;
    const data = record.data as VerificationRecorded;
    const command = data.command?.trim();
    if (command) last.set(command, data.status);
  }
  return new Set([...last].filter(([, status]) => status === 'failed').map(([command]) => command));
};

/** `memory.expired` for each active record reporting a test result that a failing run of its command contradicts. */
const contradictedRecords = (view: MemoryView, records: readonly RecordEnvelope[], sessionId: string): GovernanceDraft[] => {
  const failed = failedCommandsOf(records);
  if (failed.size === 0) return [];
  return valuesOf(view.records).flatMap((record): GovernanceDraft[] => {
    const command = record.status === 'active' ? contradictedBy(record.content, failed) : undefined;
    return command === undefined ? [] : [{ type: 'memory.expired', data: { recordId: record.recordId, reason: `contradicted: \`${command}\` failed in session ${sessionId}` } }];
  });
};

/** Fold drafts into a working view, so later decisions of the same pass see earlier ones (never stored as such). */
export const foldDrafts = (view: MemoryView, drafts: readonly GovernanceDraft[], at: number): MemoryView =>
  drafts.reduce((working, draft, index) => memoryProjection.apply(working, { stream: 'memory', seq: working.seq + 1, id: `draft-${index}`, type: draft.type, v: 1, at, actor: 'governance', data: draft.data }), view);

/**
 * The governance pass over one session's candidates (run when the session ends): every candidate the governance
 * stream does not know yet is submitted, checked (MutationReady gate, then `governCandidate`) and — when approved —
 * promoted through `promoteCandidate`, in proposal order, each decision seeing the ones before it. First, every
 * active record reporting a test result that this session's last run of the same command contradicts (it failed) is
 * expired (`memory.expired`). Pure apart from record ids; returns the drafts of one atomic governance batch (empty
 * when there is nothing new).
 */
export const governSession = (input: { sessionId: string; records: readonly RecordEnvelope[]; view: MemoryView; repoKey: string; now: number; autoPromote: boolean }): GovernanceDraft[] => {
  const evidence = turnEvidenceOf(input.records);
  const drafts: GovernanceDraft[] = contradictedRecords(input.view, input.records, input.sessionId);
  let working = foldDrafts(input.view, drafts, input.now);
  for (const { record, data: candidate } of evidence.proposals.values()) {
    if (getIn(working.candidates, candidate.candidateId)) continue;
    const gate = gateOf(evidence, candidate);
    let decision = governCandidate({ candidate, sessionId: input.sessionId, view: working, gate, repoKey: input.repoKey, now: input.now, reviewer: 'governance' });
    if (decision.outcome === 'approved' && !input.autoPromote) decision = { ...decision, outcome: 'needs_review', reason: `${decision.reason}; automatic promotion is off` };
    const submitted: MemorySubmitted = { sessionId: input.sessionId, proposalId: record.id, proposedAt: record.at, candidate };
    const batch: GovernanceDraft[] = [{ type: 'memory.submitted', data: submitted }, { type: 'memory.reviewed', data: reviewOf(candidate.candidateId, decision, 'governance', candidate) }];
    if (decision.outcome === 'approved' && gate.ok) batch.push(promoteCandidate({ candidate, sessionId: input.sessionId, decision, ready: gate.value, view: working, now: input.now }));
    working = foldDrafts(working, batch, input.now);
    drafts.push(...batch);
  }
  return drafts;
};
