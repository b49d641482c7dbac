import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { turnMachine } from 'rein';
import { assertReplayProperty, checkMachine, sampleTurnInput } from 'rein/testing';

describe('my agent', () => {
  it('never reaches mutationReady with an unknown tool', () => {
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

  it('replays any script exactly', async () => {
    const call = fc.record({ name: fc.constantFrom('read', 'list_dir'), arguments: fc.record({ path: fc.constantFrom('.', 'a.txt') }) });
    await assertReplayProperty({ scripts: fc.record({ turns: fc.array(fc.record({ text: fc.string(), toolCalls: fc.array(call, { maxLength: 2 }) }), { maxLength: 3 }) }), numRuns: 10 });
  });
});
