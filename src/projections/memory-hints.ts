import type { MemoryConfidence } from '../../models/memory.records.js';
import { valuesOf } from './persistent-map.js';
import type { MemoryRecordState, MemoryView } from './memory.view.js';

/** The boundaries of a memory read: which user, workspace, repository and branch this session works in. */
export interface MemoryQuery {
  workspace: string;
  repo?: string;
  branch?: string;
  user?: string;
  /** Lowest confidence injected (default `medium`: only confident memories reach the model). */
  minConfidence?: MemoryConfidence;
  /** The time expiry is judged at (epoch ms). */
  now: number;
}

/** Why a stored memory was not offered to the context. */
export type MemoryExclusionReason = 'inactive' | 'expired' | 'out-of-scope' | 'low-confidence';

export interface MemoryHints {
  hints: MemoryRecordState[];
  excluded: Array<{ record: MemoryRecordState; reason: MemoryExclusionReason }>;
}

const rank: Record<MemoryConfidence, number> = { low: 0, medium: 1, high: 2 };

const inScope = (record: MemoryRecordState, query: MemoryQuery): boolean => {
  const { level, key } = record.scope;
  if (level === 'user') return query.user === undefined || query.user === key;
  if (level === 'workspace') return key === query.workspace;
  if (level === 'repo') return key === (query.repo ?? query.workspace);
  if (level === 'branch') return query.branch !== undefined && key === query.branch;
  return key === (query.repo ?? query.workspace) || key.startsWith(`${query.workspace}/`);
};

/**
 * Read-side governance: only `active`, unexpired, in-scope records with enough confidence become hints (highest
 * confidence, then most recently verified, first). Candidates never do: an ungoverned candidate is not memory.
 */
export const memoryHints = (view: MemoryView, query: MemoryQuery): MemoryHints => {
  const minimum = rank[query.minConfidence ?? 'medium'];
  const hints: MemoryRecordState[] = [];
  const excluded: MemoryHints['excluded'] = [];
  for (const record of valuesOf(view.records)) {
    if (record.status !== 'active') excluded.push({ record, reason: 'inactive' });
    else if (record.expiresAt !== undefined && record.expiresAt <= query.now) excluded.push({ record, reason: 'expired' });
    else if (!inScope(record, query)) excluded.push({ record, reason: 'out-of-scope' });
    else if (rank[record.confidence] < minimum) excluded.push({ record, reason: 'low-confidence' });
    else hints.push(record);
  }
  hints.sort((left, right) => rank[right.confidence] - rank[left.confidence] || (right.lastVerifiedAt ?? right.approvedAt) - (left.lastVerifiedAt ?? left.approvedAt) || (left.recordId < right.recordId ? -1 : 1));
  excluded.sort((left, right) => (left.record.recordId < right.record.recordId ? -1 : 1));
  return { hints, excluded };
};
