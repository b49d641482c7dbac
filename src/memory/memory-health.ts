import { valuesOf } from '../projections/persistent-map.js';
import type { MemoryRecordState, MemoryView } from '../projections/memory.view.js';
import { normalizeContent } from './governance-policy.js';
import { mutableStateOf } from './mutable-state.js';

/** The periodic checks of the governance store (MG-19). */
export type MemoryHealthCheck = 'expired' | 'due_for_review' | 'mutable_state' | 'too_broad' | 'no_sources' | 'conflicting_actives';

/** One health finding: what is wrong with which active records. */
export interface MemoryHealthFinding {
  check: MemoryHealthCheck;
  recordIds: string[];
  detail: string;
}

/** The session a source ref (`<sessionId>#<recordId>`) points into. */
export const sessionOfSourceRef = (ref: string): string | undefined => {
  const at = ref.lastIndexOf('#');
  return at > 0 ? ref.slice(0, at) : undefined;
};

const tooBroad = (record: MemoryRecordState): string | undefined => {
  if (record.scope.level === 'user') return 'user scope: it would apply to every repository';
  if (record.scope.level === 'workspace' && (record.kind === 'project_fact' || record.kind === 'task_experience')) return 'a fact or experience at workspace scope: it belongs to a repository';
  return undefined;
};

/**
 * Health checks over the active store records at `now`: expired (`expiresAt` passed) and due for review
 * (`reviewAfter` passed) records, records reporting mutable state (a test result: `mutableStateOf`), too broad a scope, no sources (no `sourceRefs`, or none of the sessions they
 * point into is still in the store — `sessionExists` decides), and several active records under one conflict key
 * that disagree. Pure; one finding per record (or per conflict key), sorted by check then ids.
 */
export const memoryHealth = (view: MemoryView, now: number, sessionExists: (sessionId: string) => boolean): MemoryHealthFinding[] => {
  const findings: MemoryHealthFinding[] = [];
  const active = valuesOf(view.records).filter((record) => record.status === 'active');
  const byKey = new Map<string, MemoryRecordState[]>();
  for (const record of active) {
    if (record.expiresAt !== undefined && record.expiresAt <= now) findings.push({ check: 'expired', recordIds: [record.recordId], detail: `expired ${new Date(record.expiresAt).toISOString()}; no longer injected` });
    else if (record.reviewAfter !== undefined && record.reviewAfter <= now) findings.push({ check: 'due_for_review', recordIds: [record.recordId], detail: `due for re-verification since ${new Date(record.reviewAfter).toISOString()}` });
    const mutable = mutableStateOf(record.content);
    if (mutable) findings.push({ check: 'mutable_state', recordIds: [record.recordId], detail: `reports ${mutable}, which the next run may contradict: not a durable fact, never injected (revoke it: rein memory revoke ${record.recordId})` });
    const broad = tooBroad(record);
    if (broad) findings.push({ check: 'too_broad', recordIds: [record.recordId], detail: broad });
    const sessions = [...new Set(record.sourceRefs.map(sessionOfSourceRef).filter((id): id is string => id !== undefined))];
    if (record.sourceRefs.length === 0 || !sessions.some(sessionExists)) findings.push({ check: 'no_sources', recordIds: [record.recordId], detail: record.sourceRefs.length === 0 ? 'no source refs' : `none of its source sessions (${sessions.join(', ') || 'none'}) is in the store` });
    for (const key of record.conflictKeys ?? []) byKey.set(key, [...(byKey.get(key) ?? []), record]);
  }
  for (const [key, records] of byKey) {
    if (new Set(records.map((record) => normalizeContent(record.content))).size > 1) {
      findings.push({ check: 'conflicting_actives', recordIds: records.map((record) => record.recordId).sort(), detail: `${records.length} active records disagree under ${key}` });
    }
  }
  const order: MemoryHealthCheck[] = ['expired', 'due_for_review', 'mutable_state', 'too_broad', 'no_sources', 'conflicting_actives'];
  return findings.sort((left, right) => order.indexOf(left.check) - order.indexOf(right.check) || (left.recordIds[0]! < right.recordIds[0]! ? -1 : 1));
};
