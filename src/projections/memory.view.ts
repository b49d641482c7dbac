import type { RecordEnvelope } from '../../models/envelope.js';
import type {
  MemoryExpired,
  MemoryPromoted,
  MemoryProposed,
  MemoryRejected,
  MemoryReviewed,
  MemoryRevoked,
  MemorySubmitted,
} from '../../models/memory.records.js';
import { emptyMap, getIn, setIn, type PersistentMap } from './persistent-map.js';
import type { Projection, ViewState } from './projection.js';

/** A ledger row: the proposal plus where governance has taken it. A candidate waiting for evidence stays `pending`. */
export interface MemoryCandidateState extends MemoryProposed {
  status: 'pending' | 'approved' | 'needs_review' | 'rejected' | 'expired';
  /** The session the candidate was proposed in (set by `memory.submitted`; a session's own view leaves it out). */
  sessionId?: string;
  proposedSeq: number;
  updatedSeq: number;
  lastReview?: { outcome: MemoryReviewed['outcome']; reason: string; seq: number; reviewer?: MemoryReviewed['reviewer']; risks?: string[]; conflictsWith?: string[] };
  promotedRecordId?: string;
}

/** A governance-store row. Revocation is final: a later promotion under the same id never reactivates it. */
export interface MemoryRecordState extends MemoryPromoted {
  status: 'active' | 'deprecated' | 'revoked' | 'expired';
  promotedSeq: number;
  updatedSeq: number;
  statusReason?: string;
}

/** The memory view: the candidate ledger and the governance store, folded from `memory.*` records. */
export interface MemoryView extends ViewState {
  candidates: PersistentMap<MemoryCandidateState>;
  records: PersistentMap<MemoryRecordState>;
  /** Memory records that named an unknown candidate or record (kept out of the view, counted for health checks). */
  orphans: number;
}

const updateCandidate = (view: MemoryView, candidateId: string, seq: number, change: (candidate: MemoryCandidateState) => MemoryCandidateState): MemoryView => {
  const candidate = getIn(view.candidates, candidateId);
  if (!candidate) return { ...view, orphans: view.orphans + 1 };
  return { ...view, candidates: setIn(view.candidates, candidateId, { ...change(candidate), updatedSeq: seq }) };
};

const updateRecord = (view: MemoryView, recordId: string, seq: number, change: (record: MemoryRecordState) => MemoryRecordState): MemoryView => {
  const record = getIn(view.records, recordId);
  if (!record) return { ...view, orphans: view.orphans + 1 };
  return { ...view, records: setIn(view.records, recordId, { ...change(record), updatedSeq: seq }) };
};

const reviewStatus = (outcome: MemoryReviewed['outcome'], current: MemoryCandidateState['status']): MemoryCandidateState['status'] => {
  if (outcome === 'approved') return 'approved';
  if (outcome === 'needs_review') return 'needs_review';
  if (outcome === 'rejected') return 'rejected';
  return current === 'approved' ? current : 'pending';
};

const review = (candidate: MemoryCandidateState, data: MemoryReviewed, seq: number): MemoryCandidateState => ({
  ...candidate,
  ...(data.scope ? { scope: data.scope } : {}),
  ...(data.content ? { content: data.content } : {}),
  ...(data.confidence ? { confidence: data.confidence } : {}),
  ...(data.ttl ? { ttl: data.ttl } : {}),
  status: reviewStatus(data.outcome, candidate.status),
  lastReview: {
    outcome: data.outcome,
    reason: data.reason,
    seq,
    reviewer: data.reviewer,
    ...(data.risks && data.risks.length > 0 ? { risks: data.risks } : {}),
    ...(data.conflictsWith && data.conflictsWith.length > 0 ? { conflictsWith: data.conflictsWith } : {}),
  },
});

const promote = (view: MemoryView, data: MemoryPromoted, seq: number): MemoryView => {
  const existing = getIn(view.records, data.recordId);
  if (existing?.status === 'revoked') return { ...view, orphans: view.orphans + 1 };
  let records = setIn(view.records, data.recordId, { ...data, status: 'active', promotedSeq: seq, updatedSeq: seq });
  for (const superseded of data.supersedes ?? []) {
    const old = getIn(records, superseded);
    if (old && old.status === 'active') records = setIn(records, superseded, { ...old, status: 'deprecated', statusReason: `superseded by ${data.recordId}`, updatedSeq: seq });
  }
  let candidates = view.candidates;
  for (const candidateId of [data.candidateId, ...(data.corroboratedBy ?? [])]) {
    const candidate = getIn(candidates, candidateId);
    if (candidate) candidates = setIn(candidates, candidateId, { ...candidate, status: 'approved', promotedRecordId: data.recordId, updatedSeq: seq });
  }
  return { ...view, records, candidates };
};

/**
 * The memory view (candidate ledger + governance store) of one stream: a session's (its own `memory.proposed`
 * candidates) or the workspace's governance stream (submitted candidates, reviews, store records and their
 * lifecycle). Per record it updates a few map entries by path copying, so its cost does not grow with the number of
 * memories. Records of other types pass through.
 */
export const memoryProjection: Projection<MemoryView> = {
  name: 'memory',
  initial: () => ({ seq: 0, candidates: emptyMap(), records: emptyMap(), orphans: 0 }),
  apply(view, record: RecordEnvelope) {
    switch (record.type) {
      case 'memory.proposed': {
        const data = record.data as MemoryProposed;
        if (getIn(view.candidates, data.candidateId)) return { ...view, orphans: view.orphans + 1 };
        return { ...view, candidates: setIn(view.candidates, data.candidateId, { ...data, status: 'pending', proposedSeq: record.seq, updatedSeq: record.seq }) };
      }
      case 'memory.submitted': {
        const data = record.data as MemorySubmitted;
        if (getIn(view.candidates, data.candidate.candidateId)) return { ...view, orphans: view.orphans + 1 };
        return { ...view, candidates: setIn(view.candidates, data.candidate.candidateId, { ...data.candidate, sessionId: data.sessionId, status: 'pending', proposedSeq: record.seq, updatedSeq: record.seq }) };
      }
      case 'memory.reviewed': {
        const data = record.data as MemoryReviewed;
        return updateCandidate(view, data.candidateId, record.seq, (candidate) => review(candidate, data, record.seq));
      }
      case 'memory.promoted':
        return promote(view, record.data as MemoryPromoted, record.seq);
      case 'memory.rejected': {
        const data = record.data as MemoryRejected;
        return updateCandidate(view, data.candidateId, record.seq, (candidate) => ({ ...candidate, status: 'rejected', lastReview: { outcome: 'rejected', reason: data.reason, seq: record.seq, ...(data.by ? { reviewer: data.by } : {}) } }));
      }
      case 'memory.revoked': {
        const data = record.data as MemoryRevoked;
        return updateRecord(view, data.recordId, record.seq, (stored) => ({ ...stored, status: 'revoked', statusReason: `${data.by}: ${data.reason}` }));
      }
      case 'memory.expired': {
        const data = record.data as MemoryExpired;
        let next = view;
        if (data.recordId) next = updateRecord(next, data.recordId, record.seq, (stored) => (stored.status === 'revoked' ? stored : { ...stored, status: 'expired', statusReason: data.reason }));
        if (data.candidateId) next = updateCandidate(next, data.candidateId, record.seq, (candidate) => (candidate.status === 'pending' || candidate.status === 'needs_review' ? { ...candidate, status: 'expired' } : candidate));
        return next;
      }
      default:
        return view;
    }
  },
};
