import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { turnMachine } from 'rein';
import { assertReplayProperty, checkMachine, flattenRecords, runScriptedSession, sampleTurnInput } from 'rein/testing';

describe('testing an agent with rein/testing', () => {
  it('model-checks a statechart: mutationReady is never reached with an unknown tool', () => {
    const result = checkMachine({
      machine: turnMachine,
      input: sampleTurnInput({ names: ['read', 'teleport'] }),
      events: (snapshot) => [
        ...snapshot.context.outstanding.map((callId) => ({ type: 'tool.settled' as const, callId, name: 'read', status: 'ok' as const, observation: 'ok' })),
        { type: 'turn.uses' as const, uses: snapshot.context.results.map((row) => ({ callId: row.callId, disposition: 'consumed' as const, ref: 'next' })) },
      ],
      stateInvariants: { 'never mutation-ready': (snapshot) => !snapshot.matches('mutationReady') },
    });
    expect(result.violations).toEqual([]);
  });

  it('drives a scripted session and checks its steps', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'agent-test-'));
    const run = await runScriptedSession({
      workspace,
      script: { turns: [{ text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Empty.' }] },
    });
    expect(run.result.status).toBe('completed');
    expect(flattenRecords(run.records).filter((record) => record.type === 'turn.mutation-ready')).toHaveLength(1);
    await rm(workspace, { recursive: true, force: true });
  });

  it('holds the replay property for any script', async () => {
    const call = fc.record({ name: fc.constantFrom('read', 'list_dir', 'nope'), arguments: fc.record({ path: fc.constantFrom('.', 'a.txt', 'missing') }) });
    const scripts = fc.record({ turns: fc.array(fc.record({ text: fc.string(), toolCalls: fc.array(call, { maxLength: 2 }) }), { maxLength: 4 }) });
    await assertReplayProperty({ scripts, numRuns: 10 });
  });
});
