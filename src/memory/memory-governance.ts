import type { RecordEnvelope } from '../../models/envelope.js';
import type { CandidateScope, MemoryProposed, MemoryPromoted, MemorySubmitted } from '../../models/memory.records.js';
import { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { getIn, valuesOf } from '../projections/persistent-map.js';
import type { MemoryCandidateState, MemoryRecordState, MemoryView } from '../projections/memory.view.js';
import { GovernanceLog, type GovernanceDraft } from './governance-log.js';
import { governCandidate, type GovernanceDecision } from './governance.js';
import { MemoryError } from './memory-errors.js';
import { memoryHealth, sessionOfSourceRef, type MemoryHealthFinding } from './memory-health.js';
import { resolveMemoryScope, scopeKeyOf, type MemoryScopeKeys } from './memory-scope.js';
import { memoryStream } from './memory-stream.js';
import { promoteCandidate } from './promotion.js';
import { sessionOfCandidate } from './session-memory.js';
import { gateOf, reviewOf } from './session-governance.js';
import { turnEvidenceOf, type TurnEvidence } from './turn-evidence.js';

/** A person's approval: optionally a narrower statement or another scope level. */
export interface ApproveOptions {
  content?: string;
  scope?: CandidateScope['level'];
}

/** The human side of memory governance (what `rein memory` drives): review, approve, reject, revoke, health. */
export interface MemoryGovernance {
  /** The governance stream's view, freshly read. */
  view(): Promise<MemoryView>;
  /** Store records (active only unless `all`), newest first. */
  list(options?: { all?: boolean }): Promise<MemoryRecordState[]>;
  /** Candidates waiting for a person (`needs_review`) or for evidence (`pending`), oldest first. */
  review(): Promise<MemoryCandidateState[]>;
  /** A store record or a candidate by id, with every governance record about it (its audit trail). */
  show(id: string): Promise<{ record?: MemoryRecordState; candidate?: MemoryCandidateState | MemoryProposed; trail: RecordEnvelope[] }>;
  /** Approve and promote a candidate (MutationReady gate first); resolves with the new store record. */
  approve(candidateId: string, options?: ApproveOptions): Promise<{ decision: GovernanceDecision; record: MemoryPromoted }>;
  /** Reject a candidate for good. */
  reject(candidateId: string, reason: string): Promise<void>;
  /** Revoke a store record for good (it stays, `revoked`, for audit). */
  revoke(recordId: string, reason: string): Promise<void>;
  /** Health checks at `now` (default: the clock). */
  health(now?: number): Promise<MemoryHealthFinding[]>;
}

interface Located {
  candidate: MemoryProposed;
  sessionId: string;
  evidence: TurnEvidence;
  records: readonly RecordEnvelope[];
  submitted: boolean;
}

const closed = (candidate: MemoryCandidateState | undefined): boolean => candidate !== undefined && (candidate.status === 'approved' || candidate.status === 'rejected' || candidate.status === 'expired');

const submission = (located: Located): GovernanceDraft[] => {
  if (located.submitted) return [];
  const proposal = located.evidence.proposals.get(located.candidate.candidateId)!;
  const data: MemorySubmitted = { sessionId: located.sessionId, proposalId: proposal.record.id, proposedAt: proposal.record.at, candidate: located.candidate };
  return [{ type: 'memory.submitted', data }];
};

/**
 * Open the human side of memory governance over a store. `sessions` reads session logs for the MutationReady gate
 * (default: the same store; the CLI passes a read-only one so a running session's database is never taken).
 * Every write goes through the governance log: optimistic, retried when another process wrote first, and only
 * `promoteCandidate` writes store records.
 */
export const createMemoryGovernance = (options: { store: EventStore; sessions?: Pick<EventStore, 'read' | 'head'>; clock?: () => number; log?: GovernanceLog }): MemoryGovernance => {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? new GovernanceLog(options.store, { clock });
  const sessions = options.sessions ?? options.store;

  const locate = async (candidateId: string): Promise<Located> => {
    const view = await log.refresh();
    const known = getIn(view.candidates, candidateId);
    const sessionId = known?.sessionId ?? sessionOfCandidate(candidateId);
    if (sessionId === undefined) throw new MemoryError('MEMORY_NOT_FOUND', `no memory candidate ${candidateId}`);
    const records = upcastRecords(await sessions.read(sessionId));
    const evidence = turnEvidenceOf(records);
    const proposal = evidence.proposals.get(candidateId);
    if (!known && !proposal) throw new MemoryError('MEMORY_NOT_FOUND', `no memory candidate ${candidateId}`);
    return { candidate: proposal?.data ?? known!, sessionId, evidence, records, submitted: known !== undefined };
  };

  /** The boundaries of the candidate's session (its workspace, as `session.created` recorded it). */
  const scopeOf = async (located: Located): Promise<MemoryScopeKeys> => {
    const created = SessionCreated.safeParse(located.records[0]?.data);
    if (created.success) return resolveMemoryScope(created.data.workspace);
    const key = located.candidate.scope.key;
    return { workspace: key, repo: key };
  };

  return {
    view: () => log.refresh(),
    async list(listOptions = {}) {
      const view = await log.refresh();
      return valuesOf(view.records).filter((record) => listOptions.all || record.status === 'active').sort((left, right) => right.promotedSeq - left.promotedSeq);
    },
    async review() {
      const view = await log.refresh();
      return valuesOf(view.candidates).filter((candidate) => candidate.status === 'needs_review' || candidate.status === 'pending').sort((left, right) => left.proposedSeq - right.proposedSeq);
    },
    async show(id) {
      const view = await log.refresh();
      const record = getIn(view.records, id);
      const candidate = getIn(view.candidates, id) ?? (record ? getIn(view.candidates, record.candidateId) : undefined);
      const ids = new Set([id, ...(record ? [record.candidateId, ...(record.corroboratedBy ?? [])] : [])]);
      const trail = (await options.store.read(memoryStream)).filter((entry) => {
        const data = entry.data as { recordId?: string; candidateId?: string; candidate?: { candidateId?: string }; supersedes?: string[] };
        return ids.has(data.recordId ?? '') || ids.has(data.candidateId ?? '') || ids.has(data.candidate?.candidateId ?? '') || (data.supersedes ?? []).includes(id);
      });
      await options.store.release?.(memoryStream);
      if (record || candidate) return { ...(record ? { record } : {}), ...(candidate ? { candidate } : {}), trail };
      const located = await locate(id).catch(() => undefined);
      if (!located) throw new MemoryError('MEMORY_NOT_FOUND', `no memory record or candidate ${id}`);
      return { candidate: located.candidate, trail };
    },
    async approve(candidateId, approveOptions = {}) {
      const located = await locate(candidateId);
      const current = getIn(log.view.candidates, candidateId);
      if (closed(current)) throw new MemoryError('MEMORY_CANDIDATE_CLOSED', `candidate ${candidateId} is already ${current!.status}`);
      if (located.records.length === 0) throw new MemoryError('MEMORY_NOT_MUTATION_READY', `the log of session ${located.sessionId} is gone: the MutationReady gate cannot be checked`);
      const gate = gateOf(located.evidence, located.candidate);
      if (!gate.ok) {
        if (gate.verdict === 'reject') {
          await log.transact((view) => (closed(getIn(view.candidates, candidateId)) ? [] : [...submission(located), { type: 'memory.rejected', data: { candidateId, reason: gate.reason, by: 'governance' } }]), { actor: 'user' });
        }
        throw new MemoryError('MEMORY_NOT_MUTATION_READY', `candidate ${candidateId} cannot be promoted: ${gate.reason}`);
      }
      const keys = await scopeOf(located);
      const repoKey = keys.repo;
      const rewrite = {
        // An empty rewrite is refused by governance (content 1-2,000 characters), never read as "no rewrite".
        ...(approveOptions.content !== undefined ? { content: approveOptions.content } : {}),
        ...(approveOptions.scope ? { scope: { level: approveOptions.scope, key: scopeKeyOf(approveOptions.scope, keys, located.sessionId) } } : {}),
      };
      let outcome: { decision: GovernanceDecision; record: MemoryPromoted } | undefined;
      const now = clock();
      await log.transact((view) => {
        if (closed(getIn(view.candidates, candidateId))) throw new MemoryError('MEMORY_CANDIDATE_CLOSED', `candidate ${candidateId} is already ${getIn(view.candidates, candidateId)!.status}`);
        const decision = governCandidate({ candidate: located.candidate, sessionId: located.sessionId, view, gate, repoKey, now, reviewer: 'user', rewrite });
        if (decision.outcome !== 'approved') throw new MemoryError('MEMORY_CANDIDATE_INVALID', `candidate ${candidateId} cannot be promoted: ${decision.reason}`);
        const promotion = promoteCandidate({ candidate: located.candidate, sessionId: located.sessionId, decision, ready: gate.value, view, now });
        outcome = { decision, record: promotion.data };
        return [...submission(located), { type: 'memory.reviewed', data: reviewOf(candidateId, decision, 'user', located.candidate) }, promotion];
      }, { actor: 'user' });
      return outcome!;
    },
    async reject(candidateId, reason) {
      const located = await locate(candidateId);
      await log.transact((view) => {
        if (closed(getIn(view.candidates, candidateId))) throw new MemoryError('MEMORY_CANDIDATE_CLOSED', `candidate ${candidateId} is already ${getIn(view.candidates, candidateId)!.status}`);
        return [...submission(located), { type: 'memory.rejected', data: { candidateId, reason, by: 'user' } }];
      }, { actor: 'user' });
    },
    async revoke(recordId, reason) {
      await log.transact((view) => {
        const record = getIn(view.records, recordId);
        if (!record) throw new MemoryError('MEMORY_NOT_FOUND', `no memory record ${recordId}`);
        if (record.status === 'revoked') throw new MemoryError('MEMORY_RECORD_CLOSED', `memory record ${recordId} is already revoked`);
        return [{ type: 'memory.revoked', data: { recordId, reason, by: 'user' } }];
      }, { actor: 'user' });
    },
    async health(now = clock()) {
      const view = await log.refresh();
      const referenced = new Set(valuesOf(view.records).flatMap((record) => record.sourceRefs.map(sessionOfSourceRef).filter((id): id is string => id !== undefined)));
      const existing = new Set<string>();
      for (const sessionId of referenced) if ((await sessions.head(sessionId).catch(() => 0)) > 0) existing.add(sessionId);
      return memoryHealth(view, now, (sessionId) => existing.has(sessionId));
    },
  };
};
