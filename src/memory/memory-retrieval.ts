import { memoryHints } from '../projections/memory-hints.js';
import type { MemoryRecordState, MemoryView } from '../projections/memory.view.js';
import type { MemoryScopeKeys } from './memory-scope.js';
import type { MemoryReadItem, MemoryReadRequest, MemoryReadResult } from '../tools/tool-memory.js';

const iso = (at: number | undefined): string | undefined => (at === undefined ? undefined : new Date(at).toISOString());

/** A store record as a tool shows it: labelled with scope, confidence and authority. */
export const memoryItemOf = (record: MemoryRecordState): MemoryReadItem => {
  const lastVerifiedAt = iso(record.lastVerifiedAt);
  const reviewAfter = iso(record.reviewAfter);
  const expiresAt = iso(record.expiresAt);
  return {
    id: record.recordId,
    content: record.content,
    kind: record.kind,
    scope: `${record.scope.level}:${record.scope.key}`,
    confidence: record.confidence,
    authority: record.authority,
    version: record.version,
    ...(lastVerifiedAt ? { lastVerifiedAt } : {}),
    ...(reviewAfter ? { reviewAfter } : {}),
    ...(expiresAt ? { expiresAt } : {}),
  };
};

/**
 * Scoped retrieval (`memory_read`): the store records that apply to this session's workspace, repository and
 * branch (and user), optionally one scope level, task type or kinds; `active` and unexpired only; a record this
 * session's own verified observations or the user's statements contradict is suppressed (fresh facts win). Pure.
 */
export const readMemory = (input: { governance: MemoryView; session?: MemoryView; scope: MemoryScopeKeys; request: MemoryReadRequest; now: number }): MemoryReadResult => {
  const { request, scope } = input;
  const found = memoryHints(
    input.governance,
    {
      workspace: scope.workspace,
      repo: scope.repo,
      ...(scope.branch ? { branch: scope.branch } : {}),
      ...(scope.user ? { user: scope.user } : {}),
      ...(request.taskType ? { taskType: request.taskType } : {}),
      ...(request.kinds ? { kinds: request.kinds } : {}),
      minConfidence: request.minConfidence ?? 'low',
      now: input.now,
    },
    input.session,
  );
  const limit = request.limit ?? 10;
  const memories = found.hints.filter((record) => request.scope === undefined || record.scope.level === request.scope).slice(0, limit).map(memoryItemOf);
  const suppressed = found.excluded.filter((entry) => entry.reason === 'superseded-by-session').map((entry) => ({ id: entry.record.recordId, reason: entry.detail ?? entry.reason }));
  return { memories, suppressed };
};
