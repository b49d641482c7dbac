import { flattenRecords } from '../../src/host/step-record.js';
import { realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextProjected } from '../../models/context.records.js';
import { recordVersion } from '../../models/records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { testCommandContent, testCommandKey } from '../../src/memory/candidate-extractor.js';
import { governCandidate } from '../../src/memory/governance.js';
import { memoryHealth } from '../../src/memory/memory-health.js';
import { mutableStateOf } from '../../src/memory/mutable-state.js';
import { checkPromotionGate } from '../../src/memory/promotion-gate.js';
import { memoryStream } from '../../src/memory/memory-stream.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { getIn } from '../../src/projections/persistent-map.js';
import { rebuildView } from '../../src/projections/projection.js';
import { governanceOf, runMemorySession, seedPassingTests, verifyScript } from '../support/memory-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Issue 30 A5: "Verified here: `npm test` … passed" was promoted with high confidence and injected into a later session
 * whose tests failed. A test result is an observation of mutable state, not a durable fact.
 */
const legacy = 'Verified here: `node --test` ran this repository\'s tests and passed.';
const failingTest = "import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, 3));\n";

let workspace: { path: string; remove: () => Promise<void> };
let root: string;
beforeEach(async () => {
  workspace = await makeTempDir('rein-memory-mutable-');
  root = await realpath(workspace.path);
});
afterEach(() => workspace.remove());

/** A store whose governance stream holds what older versions promoted: the test result at high confidence. */
const storeWithLegacy = async () => {
  const store = createMemoryEventStore();
  const data = { recordId: 'm-legacy', candidateId: 's-0:c-0', content: legacy, kind: 'project_fact', scope: { level: 'repo', key: root }, confidence: 'high', authority: 'default', sourceRefs: ['s-0#r0'], version: 5, approvedAt: Date.now(), lastVerifiedAt: Date.now(), expiresAt: Date.now() + 90 * 86_400_000, reviewAfter: Date.now() + 30 * 86_400_000, conflictKeys: [testCommandKey(root)] };
  await store.append(memoryStream, [{ id: 'g1', type: 'memory.promoted', v: recordVersion('memory.promoted'), at: Date.now(), actor: 'governance', data }], { expectedSeq: 0 });
  return store;
};

describe('observations of mutable state in long-term memory', () => {
  it('tells a test result or a file\'s content from what stays true', () => {
    expect(mutableStateOf(legacy)).toBe('a test result');
    expect(mutableStateOf('All tests pass now.')).toBe('a test result');
    expect(mutableStateOf('The build is green on main')).toBe('a test result');
    expect(mutableStateOf('config.json currently sets the port to 8080')).toBe("a file's content");
    expect(mutableStateOf(testCommandContent('npm test'))).toBeUndefined();
    expect(mutableStateOf(testCommandContent('npm run test-failing'))).toBeUndefined();
    expect(mutableStateOf('API docs live in docs/api')).toBeUndefined();
  });

  it('a passing run proposes which command runs the tests, never that they passed; a claimed test result is never promoted automatically', () => {
    const gate = checkPromotionGate({ sourceTurns: [], turns: new Map(), sessionEnded: true });
    const view = memoryProjection.initial();
    const base = { candidateId: 's-1:c-1', kind: 'project_fact' as const, scope: { level: 'repo' as const, key: root }, confidence: 'low' as const, conflictKeys: [], createdBy: 'runtime' as const };
    const fromTool = governCandidate({ candidate: { ...base, content: 'The tests pass after the fix.', source: { type: 'tool_output', eventIds: ['r1'] } }, sessionId: 's-1', view, gate, repoKey: root, now: Date.now(), reviewer: 'governance' });
    expect(fromTool).toMatchObject({ outcome: 'rejected' });
    expect(fromTool.reason).toContain('mutable state (a test result)');
    const fromUser = governCandidate({ candidate: { ...base, content: 'Remember that the tests pass on main.', source: { type: 'explicit_user', eventIds: ['u1'] } }, sessionId: 's-1', view, gate, repoKey: root, now: Date.now(), reviewer: 'governance' });
    expect(fromUser.outcome).toBe('needs_review');
  });

  it('a stored test result is never injected, rein memory health names it, and a failing run of its command expires it', async () => {
    const store = await storeWithLegacy();
    const before = rebuildView(memoryProjection, await store.read(memoryStream));
    expect(memoryHealth(before, Date.now(), () => true)).toEqual([expect.objectContaining({ check: 'mutable_state', recordIds: ['m-legacy'] })]);

    await writeFile(join(root, 'sum.test.mjs'), failingTest);
    const failing = await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    expect(failing.records.find((record) => record.type === 'verification.recorded')!.data).toMatchObject({ status: 'failed' });
    // The model was not told the tests pass: the record was left out as stale.
    const projected = flattenRecords(failing.records).filter((record) => record.type === 'context.projected').map((record) => record.data as ContextProjected);
    expect(projected.length).toBeGreaterThan(0);
    for (const ledger of projected) {
      expect(ledger.excluded).toContainEqual(expect.objectContaining({ source: 'memory', refs: ['memory:m-legacy'], reason: 'stale' }));
      expect((ledger.included ?? []).some((entry) => entry.refs.includes('memory:m-legacy'))).toBe(false);
    }
    // The contradicting run expired it.
    const expired = await governanceOf(store, 'memory.expired');
    expect(expired.map((record) => record.data)).toEqual([{ recordId: 'm-legacy', reason: `contradicted: \`node --test\` failed in session ${failing.sessionId}` }]);
    const after = rebuildView(memoryProjection, await store.read(memoryStream));
    expect(getIn(after.records, 'm-legacy')?.status).toBe('expired');
  });

  it('passing runs keep automatic promotion for what is stable, superseding a stored test result instead of conflicting with it', async () => {
    const store = await storeWithLegacy();
    await seedPassingTests(root);
    await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    await runMemorySession({ store, workspace: root, script: verifyScript('node --test') });
    const promoted = (await governanceOf(store, 'memory.promoted')).slice(1).map((record) => record.data as { content: string; supersedes?: string[] });
    expect(promoted).toEqual([expect.objectContaining({ content: testCommandContent('node --test'), supersedes: ['m-legacy'] })]);
    const view = rebuildView(memoryProjection, await store.read(memoryStream));
    expect(getIn(view.records, 'm-legacy')?.status).toBe('deprecated');
    expect(memoryHealth(view, Date.now(), () => true).filter((finding) => finding.check === 'mutable_state')).toEqual([]);
  });
});
