import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MemoryProposed, MemoryRejected, MemoryReviewed } from '../../models/memory.records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { checkPromotionGate } from '../../src/memory/promotion-gate.js';
import { sourceTurnsOf, turnEvidenceOf, unverifiedSourcesOf, type TurnStatus } from '../../src/memory/turn-evidence.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { governanceOf, runMemorySession } from '../support/memory-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

const turns = (entries: Record<string, TurnStatus>) => new Map(Object.entries(entries));

describe('the MutationReady gate of promotion', () => {
  it('passes only when every source turn reached MutationReady; blocked rejects, open waits (or rejects once the session ended)', () => {
    const ready = { status: 'mutation-ready' } as const;
    const blocked = { status: 'blocked', classes: ['tool.schema_invalid'] } as const;
    expect(checkPromotionGate({ sourceTurns: ['t1', 't2'], turns: turns({ t1: ready, t2: ready }), sessionEnded: false })).toMatchObject({ ok: true, evidence: { status: 'mutation-ready', turns: ['t1', 't2'] } });
    expect(checkPromotionGate({ sourceTurns: [], turns: turns({}), sessionEnded: true })).toMatchObject({ ok: true, evidence: { status: 'no-turn' } });
    expect(checkPromotionGate({ sourceTurns: ['t1', 't2'], turns: turns({ t1: ready, t2: blocked }), sessionEnded: false })).toMatchObject({ ok: false, verdict: 'reject', evidence: { status: 'blocked' } });
    expect(checkPromotionGate({ sourceTurns: ['t1'], turns: turns({}), sessionEnded: false })).toMatchObject({ ok: false, verdict: 'wait', evidence: { status: 'open' } });
    expect(checkPromotionGate({ sourceTurns: ['t1'], turns: turns({}), sessionEnded: true })).toMatchObject({ ok: false, verdict: 'reject', evidence: { status: 'open' } });
    const reason = checkPromotionGate({ sourceTurns: ['t2'], turns: turns({ t2: blocked }), sessionEnded: false });
    expect(!reason.ok && reason.reason).toContain('tool.schema_invalid');
  });

  it('rejects a verified observation whose source is not a passing run, whatever its turns', () => {
    const evidence = turnEvidenceOf([
      { stream: 's', seq: 1, id: 'v-pass', type: 'verification.recorded', v: 1, at: 0, actor: 'root', data: { name: 'bash', status: 'passed', command: 'npm test', exitCode: 0, summary: '' } },
      { stream: 's', seq: 2, id: 'v-fail', type: 'verification.recorded', v: 1, at: 0, actor: 'root', data: { name: 'bash', status: 'failed', command: 'npm test', exitCode: 1, summary: '' } },
      { stream: 's', seq: 3, id: 'v-claim', type: 'verification.recorded', v: 1, at: 0, actor: 'root', data: { name: 'host', status: 'passed', command: 'npm test', summary: '' } },
    ]);
    const observed = (eventIds: string[]) => ({ source: { type: 'verified_observation' as const, eventIds } });
    expect(unverifiedSourcesOf(evidence, observed(['v-pass']))).toEqual([]);
    for (const id of ['v-fail', 'v-claim', 'no-such-record']) {
      const unverifiedSources = unverifiedSourcesOf(evidence, observed(['v-pass', id]));
      expect(unverifiedSources).toEqual([id]);
      expect(checkPromotionGate({ sourceTurns: [], turns: turns({}), sessionEnded: true, unverifiedSources })).toMatchObject({ ok: false, verdict: 'reject' });
    }
    expect(unverifiedSourcesOf(evidence, { source: { type: 'explicit_user', eventIds: ['u1'] } })).toEqual([]);
  });

  describe('on real sessions', () => {
    let workspace: { path: string; remove: () => Promise<void> };
    beforeEach(async () => {
      workspace = await makeTempDir('rein-memory-gate-');
    });
    afterEach(() => workspace.remove());

    it('reads the turn of a memory_write from the log, and rejects a candidate whose turn was blocked', async () => {
      const store = createMemoryEventStore();
      const script = {
        turns: [
          // An episodic experience backed by tool output would be approved, but its turn carries a schema-invalid call.
          { text: 'Noting.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
          { text: 'Noting.', toolCalls: [{ name: 'memory_write', arguments: { content: 'list_dir of the root showed an empty workspace', kind: 'task_experience', evidence: ['root:e1.0'] } }, { name: 'read', arguments: { path: 42 } }] },
          { text: 'Again, cleanly.', toolCalls: [{ name: 'memory_write', arguments: { content: 'the workspace root was empty when listed', kind: 'task_experience', evidence: ['root:e1.0'] } }] },
          { text: 'Done.' },
        ],
      };
      const run = await runMemorySession({ store, workspace: workspace.path, script });
      expect(run.result.status).toBe('completed');
      const evidence = turnEvidenceOf(run.records);
      const [blockedOne, readyOne] = run.records.filter((record) => record.type === 'memory.proposed').map((record) => record.data as MemoryProposed);
      expect(sourceTurnsOf(evidence, blockedOne!.candidateId, blockedOne!.source.eventIds)).toEqual(['root:e1', 'root:e3']);
      expect(evidence.turns.get('root:e3')).toMatchObject({ status: 'blocked' });
      const reviews = (await governanceOf(store, 'memory.reviewed')).map((record) => record.data as MemoryReviewed);
      expect(reviews.find((review) => review.candidateId === blockedOne!.candidateId)).toMatchObject({ outcome: 'rejected', gate: { status: 'blocked' } });
      expect(reviews.find((review) => review.candidateId === readyOne!.candidateId)).toMatchObject({ outcome: 'approved', confidence: 'low', gate: { status: 'mutation-ready' } });
      expect(await governanceOf(store, 'memory.promoted')).toHaveLength(1);
    });

    it('a person cannot approve a candidate whose turn was blocked: it is rejected with that reason', async () => {
      const store = createMemoryEventStore();
      const script = {
        turns: [
          { text: 'Noting.', toolCalls: [{ name: 'memory_write', arguments: { content: 'prefer small diffs here', kind: 'user_preference' } }, { name: 'read', arguments: {} }] },
          { text: 'Done.' },
        ],
      };
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), memory: { autoPromote: false } });
      const session = await rein.startSession({ task: 'Note it.' });
      const result = await session.whenQuiet();
      // The model may answer over a blocked turn (the session completes with the findings recorded); the turn's
      // candidate still never passes the gate.
      expect(result.status).toBe('completed');
      const [candidate] = (await store.read(session.id)).filter((record) => record.type === 'memory.proposed').map((record) => record.data as MemoryProposed);
      const [review] = (await governanceOf(store, 'memory.reviewed')).map((record) => record.data as MemoryReviewed);
      expect(review).toMatchObject({ candidateId: candidate!.candidateId, outcome: 'rejected', gate: { status: 'blocked' } });
      await expect(rein.memory.approve(candidate!.candidateId)).rejects.toMatchObject({ code: 'MEMORY_CANDIDATE_CLOSED' });
      expect(await governanceOf(store, 'memory.promoted')).toHaveLength(0);
    });

    it('a person approving a candidate of a still-open turn waits: nothing is written', async () => {
      const store = createMemoryEventStore();
      const script = { turns: [{ text: 'Noting.', toolCalls: [{ name: 'memory_write', arguments: { content: 'docs live in docs/api', kind: 'project_fact' } }, { name: 'write', arguments: { path: 'x.txt', content: 'x' } }] }, { text: 'Done.' }] };
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)) });
      const session = await rein.startSession({ task: 'Note it.' });
      expect((await session.whenQuiet()).status).toBe('paused');
      const [candidate] = (await store.read(session.id)).filter((record) => record.type === 'memory.proposed').map((record) => record.data as MemoryProposed);
      await expect(rein.memory.approve(candidate!.candidateId)).rejects.toMatchObject({ code: 'MEMORY_NOT_MUTATION_READY' });
      expect(await governanceOf(store)).toHaveLength(0);
      await session.approve(session.pendingApprovals()[0]!.approvalId, { decision: 'deny' });
      expect((await session.whenQuiet()).status).toBe('completed');
      const rejected = (await governanceOf(store, 'memory.rejected')).map((record) => record.data as MemoryRejected);
      expect(rejected).toHaveLength(0);
      const [review] = (await governanceOf(store, 'memory.reviewed')).map((record) => record.data as MemoryReviewed);
      expect(review).toMatchObject({ outcome: 'needs_review', gate: { status: 'mutation-ready' } });
    });
  });
});
