import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Script } from 'rein';
import { assertReplayProperty } from 'rein/testing';

describe('ReplayPropertyOptions.rein', () => {
  it('may be a function of the generated script, as its JSDoc says', async () => {
    const seen: number[] = [];
    const scripts: fc.Arbitrary<Script> = fc.integer({ min: 1, max: 3 }).map((count) => ({ turns: Array.from({ length: count }, (_, index) => ({ text: index === count - 1 ? 'done' : 'looking', toolCalls: index === count - 1 ? [] : [{ name: 'list_dir', arguments: { path: '.' } }] })), agents: {} }));
    await assertReplayProperty({
      scripts,
      numRuns: 3,
      rein: (script) => {
        seen.push(script.turns.length);
        return { budgets: { maxTurns: script.turns.length } };
      },
      check: (run) => {
        expect(run.result.status).toBe('completed');
        expect(run.records[0]).toMatchObject({ type: 'session.created', data: { budgets: { maxTurns: run.records.filter((record) => record.type === 'model.responded').length } } });
      },
    });
    expect(seen).toHaveLength(3);
  });
});
