import { realpath } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextProjected } from '../../models/context.records.js';
import type { MemoryPromoted, MemoryReviewed, MemorySubmitted } from '../../models/memory.records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { rebuildView } from '../../src/projections/projection.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { getIn, valuesOf } from '../../src/projections/persistent-map.js';
import { testCommandContent, testCommandKey } from '../../src/memory/candidate-extractor.js';
import { governanceOf, runMemorySession, seedPassingTests, verifyScript } from '../support/memory-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

let workspace: { path: string; remove: () => Promise<void> };
let root: string;
beforeEach(async () => {
  workspace = await makeTempDir('rein-memory-observe-');
  root = await realpath(workspace.path);
  await seedPassingTests(root);
});
afterEach(() => workspace.remove());

describe('a repeated verified observation', () => {
  it('waits after one session, is promoted at repository scope after a second, and becomes high confidence after a third', async () => {
    const store = createMemoryEventStore();
    const first = await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    expect(first.result.status).toBe('completed');
    const proposed = first.records.filter((record) => record.type === 'memory.proposed');
    expect(proposed).toHaveLength(1);
    expect(proposed[0]!.data).toMatchObject({ content: testCommandContent('node --test'), kind: 'project_fact', scope: { level: 'repo', key: root }, source: { type: 'verified_observation' }, confidence: 'low', createdBy: 'runtime', conflictKeys: [testCommandKey(root)] });
    const [firstReview] = await governanceOf(store, 'memory.reviewed');
    expect(firstReview!.data).toMatchObject({ outcome: 'waiting', reviewer: 'governance', confidence: 'low', gate: { status: 'mutation-ready' } });
    expect(await governanceOf(store, 'memory.promoted')).toHaveLength(0);

    const second = await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    const promoted = await governanceOf(store, 'memory.promoted');
    expect(promoted).toHaveLength(1);
    const record = promoted[0]!.data as MemoryPromoted;
    const secondCandidate = (second.records.find((entry) => entry.type === 'memory.proposed')!.data as { candidateId: string }).candidateId;
    expect(record).toMatchObject({ candidateId: secondCandidate, corroboratedBy: [(proposed[0]!.data as { candidateId: string }).candidateId], scope: { level: 'repo', key: root }, confidence: 'medium', authority: 'hint', version: 1, conflictKeys: [testCommandKey(root)] });
    expect(record.sourceRefs.map((ref) => ref.split('#')[0])).toEqual(expect.arrayContaining([first.sessionId, second.sessionId]));
    expect(record.reviewAfter! - record.approvedAt).toBeLessThanOrEqual(30 * 24 * 3600 * 1000);
    const view = rebuildView(memoryProjection, await store.read('memory'));
    expect(getIn(view.candidates, (proposed[0]!.data as { candidateId: string }).candidateId)).toMatchObject({ status: 'approved', promotedRecordId: record.recordId });

    await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    const versions = (await governanceOf(store, 'memory.promoted')).map((entry) => entry.data as MemoryPromoted);
    expect(versions).toHaveLength(2);
    expect(versions[1]).toMatchObject({ version: 2, supersedes: [record.recordId], confidence: 'high', authority: 'default' });
    const after = rebuildView(memoryProjection, await store.read('memory'));
    expect(getIn(after.records, record.recordId)?.status).toBe('deprecated');
    expect(getIn(after.records, versions[1]!.recordId)?.status).toBe('active');
  });

  it('verified again and again: every version keeps high confidence and default authority and carries every earlier source (D8)', async () => {
    const store = createMemoryEventStore();
    const sessions: string[] = [];
    for (let run = 0; run < 5; run++) sessions.push((await runMemorySession({ store, workspace: root, script: verifyScript('node --test') })).sessionId);
    const versions = (await governanceOf(store, 'memory.promoted')).map((entry) => entry.data as MemoryPromoted);
    expect(versions.map((version) => [version.version, version.confidence, version.authority])).toEqual([[1, 'medium', 'hint'], [2, 'high', 'default'], [3, 'high', 'default'], [4, 'high', 'default']]);
    const sourcesOf = (version: MemoryPromoted) => new Set(version.sourceRefs.map((ref) => ref.split('#')[0]));
    versions.forEach((version, index) => expect([...sourcesOf(version)].sort()).toEqual(sessions.slice(0, index + 2).sort()));
    const view = rebuildView(memoryProjection, await store.read('memory'));
    expect(valuesOf(view.records).filter((record) => record.status === 'active').map((record) => record.recordId)).toEqual([versions[3]!.recordId]);
  });

  it('a conflicting observation goes to review, and this session\'s own observation wins over the memory in its context', async () => {
    const store = createMemoryEventStore();
    await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    const [active] = (await governanceOf(store, 'memory.promoted')).map((entry) => entry.data as MemoryPromoted);

    const conflicting = await runMemorySession({ store, workspace: root, script: verifyScript('node --test --test-reporter=tap') });
    expect(conflicting.result.status).toBe('completed');
    const submitted = (await governanceOf(store, 'memory.submitted')).map((entry) => entry.data as MemorySubmitted).find((entry) => entry.sessionId === conflicting.sessionId)!;
    const review = (await governanceOf(store, 'memory.reviewed')).map((entry) => entry.data as MemoryReviewed).find((entry) => entry.candidateId === submitted.candidate.candidateId)!;
    expect(review).toMatchObject({ outcome: 'needs_review', conflictsWith: [active!.recordId] });
    expect(await governanceOf(store, 'memory.promoted')).toHaveLength(1);

    // The ledger keeps its memory decisions (the log cannot rebuild them), folded into the step records.
    const contexts = flattenRecords(conflicting.records).filter((entry) => entry.type === 'context.projected').map((entry) => entry.data as ContextProjected);
    expect(contexts[0]!.included!.some((item) => item.source === 'memory' && item.refs.includes(`memory:${active!.recordId}`))).toBe(true);
    expect(contexts[1]!.excluded).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'memory', refs: [`memory:${active!.recordId}`], reason: 'superseded-by-session' })]));
  });
});
