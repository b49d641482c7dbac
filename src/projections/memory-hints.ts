import type { MemoryConfidence, MemoryKind } from '../../models/memory.records.js';
import { valuesOf } from './persistent-map.js';
import type { MemoryRecordState, MemoryView } from './memory.view.js';
import { mutableStateOf } from '../memory/mutable-state.js';

/** The boundaries of a memory read: which user, workspace, repository, branch and kind of task this session works in. */
export interface MemoryQuery {
  workspace: string;
  repo?: string;
  branch?: string;
  user?: string;
  /** Only records learned in this kind of task (records without a task type always match). */
  taskType?: string;
  /** Only these kinds of memory. */
  kinds?: readonly MemoryKind[];
  /** Lowest confidence injected (default `medium`: only confident memories reach the model). */
  minConfidence?: MemoryConfidence;
  /** The time expiry is judged at (epoch ms). */
  now: number;
}

/** Why a stored memory was not offered to the context. */
export type MemoryExclusionReason = 'inactive' | 'expired' | 'out-of-scope' | 'low-confidence' | 'stale' | 'superseded-by-session';

export interface MemoryHints {
  hints: MemoryRecordState[];
  excluded: Array<{ record: MemoryRecordState; reason: MemoryExclusionReason; detail?: string }>;
}

const rank: Record<MemoryConfidence, number> = { low: 0, medium: 1, high: 2 };

const inScope = (record: MemoryRecordState, query: MemoryQuery): boolean => {
  const { level, key } = record.scope;
  const repo = query.repo ?? query.workspace;
  if (level === 'user') return query.user === undefined || query.user === key;
  if (level === 'workspace') return key === query.workspace;
  if (level === 'repo') return key === repo;
  if (level === 'branch') return query.branch !== undefined && (key === `${repo}#${query.branch}` || key === query.branch);
  return key === repo || key.startsWith(`${query.workspace}/`);
};

const matchesTask = (record: MemoryRecordState, query: MemoryQuery): boolean =>
  (query.taskType === undefined || record.taskType === undefined || record.taskType === query.taskType) && (query.kinds === undefined || query.kinds.includes(record.kind));

/**
 * What the current session established itself: conflict key → the contents its own verified observations and the
 * user's explicit statements say (its `memory.proposed` candidates with those sources). Fresh facts beat memory.
 */
export const sessionFactsOf = (session: MemoryView | undefined): Map<string, Set<string>> => {
  const facts = new Map<string, Set<string>>();
  for (const candidate of session ? valuesOf(session.candidates) : []) {
    if (candidate.source.type !== 'verified_observation' && candidate.source.type !== 'explicit_user') continue;
    for (const key of candidate.conflictKeys) facts.set(key, (facts.get(key) ?? new Set()).add(candidate.content.trim()));
  }
  return facts;
};

const supersededBy = (record: MemoryRecordState, facts: ReadonlyMap<string, ReadonlySet<string>>): string | undefined => {
  for (const key of record.conflictKeys ?? []) {
    const seen = facts.get(key);
    if (seen && !seen.has(record.content.trim())) return `this session observed otherwise under ${key}`;
  }
  return undefined;
};

interface Memo {
  key: string;
  /** The answer holds from `from` until the first hint expires. */
  from: number;
  until: number;
  result: MemoryHints;
}

const memos = new WeakMap<MemoryView, Memo>();

/**
 * Read-side governance (MG-10, MG-11): only `active`, unexpired, in-scope records of the task's kind with enough
 * confidence become hints (highest confidence, then most recently verified, first), and a record that disagrees
 * with what this session itself verified or was told under the same conflict key is left out
 * (`superseded-by-session`): fresh session facts win over memory. Candidates never become hints. Pure; the answer
 * for the same views and query is remembered until the first hint expires, so asking before every model call costs
 * one pass over the store only when the store, this session's facts or the query changed.
 */
export const memoryHints = (view: MemoryView, query: MemoryQuery, session?: MemoryView): MemoryHints => {
  const { now, ...rest } = query;
  const facts = sessionFactsOf(session);
  const key = JSON.stringify([rest, [...facts].map(([factKey, contents]) => [factKey, [...contents].sort()]).sort()]);
  const memo = memos.get(view);
  if (memo && memo.key === key && now >= memo.from && now < memo.until) return memo.result;
  const result = computeHints(view, query, facts);
  const until = result.hints.reduce((earliest, hint) => Math.min(earliest, hint.expiresAt ?? Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
  memos.set(view, { key, from: now, until, result });
  return result;
};

const computeHints = (view: MemoryView, query: MemoryQuery, facts: ReadonlyMap<string, ReadonlySet<string>>): MemoryHints => {
  const minimum = rank[query.minConfidence ?? 'medium'];
  const hints: MemoryRecordState[] = [];
  const excluded: MemoryHints['excluded'] = [];
  for (const record of valuesOf(view.records)) {
    const superseded = record.status === 'active' ? supersededBy(record, facts) : undefined;
    if (record.status !== 'active') excluded.push({ record, reason: 'inactive' });
    else if (record.expiresAt !== undefined && record.expiresAt <= query.now) excluded.push({ record, reason: 'expired' });
    else if (!inScope(record, query) || !matchesTask(record, query)) excluded.push({ record, reason: 'out-of-scope' });
    else if (rank[record.confidence] < minimum) excluded.push({ record, reason: 'low-confidence' });
    // A test result or a file's content was true of one run: left out as `stale` whatever its confidence.
    else if (mutableStateOf(record.content)) excluded.push({ record, reason: 'stale', detail: `it reports ${mutableStateOf(record.content)}, which may have changed since` });
    else if (superseded) excluded.push({ record, reason: 'superseded-by-session', detail: superseded });
    else hints.push(record);
  }
  hints.sort((left, right) => rank[right.confidence] - rank[left.confidence] || (right.lastVerifiedAt ?? right.approvedAt) - (left.lastVerifiedAt ?? left.approvedAt) || (left.recordId < right.recordId ? -1 : 1));
  return { hints, excluded };
};
