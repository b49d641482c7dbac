import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { ReinRecordSchema } from '../../models/records.js';
import { memoryHints } from '../../src/projections/memory-hints.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { getIn } from '../../src/projections/persistent-map.js';
import { rebuildView } from '../../src/projections/projection.js';

const records = (entries: Array<{ type: string; data: Record<string, unknown> }>): RecordEnvelope[] =>
  entries.map((entry, index) => ReinRecordSchema.parse({ stream: 's', seq: index + 1, id: `r${index + 1}`, type: entry.type, v: 1, at: index, actor: 'root', data: entry.data }) as RecordEnvelope);

const proposed = (candidateId: string, extra: Record<string, unknown> = {}) => ({
  type: 'memory.proposed',
  data: { candidateId, content: `fact ${candidateId}`, kind: 'project_fact', scope: { level: 'repo', key: '/work/repo' }, source: { type: 'verified_observation', eventIds: ['e1'] }, confidence: 'medium', conflictKeys: [], createdBy: 'runtime', ...extra },
});
const promoted = (recordId: string, candidateId: string, extra: Record<string, unknown> = {}) => ({
  type: 'memory.promoted',
  data: { recordId, candidateId, content: `fact ${candidateId}`, kind: 'project_fact', scope: { level: 'repo', key: '/work/repo' }, confidence: 'high', authority: 'hint', sourceRefs: ['#1'], version: 1, approvedAt: 10, ...extra },
});

describe('the memory view', () => {
  it('tracks candidates through review and promotion; revocation is final', () => {
    const view = rebuildView(memoryProjection, records([
      proposed('c1'),
      { type: 'memory.reviewed', data: { candidateId: 'c1', outcome: 'needs_review', reviewer: 'governance', reason: 'conflicts' } },
      promoted('m1', 'c1'),
      { type: 'memory.revoked', data: { recordId: 'm1', reason: 'forget that', by: 'user' } },
      promoted('m1', 'c1'),
      { type: 'memory.rejected', data: { candidateId: 'c9', reason: 'unknown candidate' } },
    ]));
    expect(getIn(view.candidates, 'c1')).toMatchObject({ status: 'approved', promotedRecordId: 'm1', lastReview: { outcome: 'needs_review' } });
    expect(getIn(view.records, 'm1')).toMatchObject({ status: 'revoked' });
    expect(view.orphans).toBe(2);
  });

  it('a new version deprecates the one it supersedes', () => {
    const view = rebuildView(memoryProjection, records([proposed('c1'), promoted('m1', 'c1'), proposed('c2'), promoted('m2', 'c2', { supersedes: ['m1'], version: 2 })]));
    expect(getIn(view.records, 'm1')?.status).toBe('deprecated');
    expect(getIn(view.records, 'm2')?.status).toBe('active');
  });

  it('hints are active, unexpired, in scope and confident; candidates never are', () => {
    const view = rebuildView(memoryProjection, records([
      proposed('c0'),
      proposed('c1'), promoted('m-ok', 'c1'),
      proposed('c2'), promoted('m-expired', 'c2', { expiresAt: 50 }),
      proposed('c3'), promoted('m-other-repo', 'c3', { scope: { level: 'repo', key: '/elsewhere' } }),
      proposed('c4'), promoted('m-low', 'c4', { confidence: 'low' }),
      proposed('c5'), promoted('m-revoked', 'c5'),
      { type: 'memory.revoked', data: { recordId: 'm-revoked', reason: 'no', by: 'user' } },
      proposed('c6'), promoted('m-user', 'c6', { scope: { level: 'user', key: 'me' }, confidence: 'medium' }),
    ]));
    const result = memoryHints(view, { workspace: '/work/repo', now: 100 });
    expect(result.hints.map((hint) => hint.recordId)).toEqual(['m-ok', 'm-user']);
    expect(Object.fromEntries(result.excluded.map((entry) => [entry.record.recordId, entry.reason]))).toEqual({ 'm-expired': 'expired', 'm-other-repo': 'out-of-scope', 'm-low': 'low-confidence', 'm-revoked': 'inactive' });
  });
});
