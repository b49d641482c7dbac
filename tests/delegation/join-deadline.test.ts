import { describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, parseScript } from '../../src/index.js';
import { entriesOfRows } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Issue 30 E: a child's wall-clock deadline is charged to the join. A child's wall time is clamped to what its parent
 * has left, so a child stopped at its deadline was stopped at the parent's too: the parent makes no model call after
 * the join (on 3c77950 it made one more and completed, past its budget).
 */
describe('a child stopped at the deadline it shares with its parent', () => {
  it('ends the parent budget-exhausted at the join, with no model call after it', async () => {
    const workspace = await makeTempDir('rein-join-deadline-');
    const store = createMemoryEventStore();
    const report = { status: 'completed', summary: 'ran', command: 'sleep 5', exit_code: 0, passed: true, failing_tests: [], relevant_output: '' };
    const script = {
      turns: [
        { text: 'Delegating the slow run.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'slow', role: 'tester', objective: 'Run the slow command.' }], join: { policy: 'all' } } }] },
        { text: 'Done, after the deadline.' },
      ],
      agents: { tester: { turns: [{ text: 'Running.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 5' } }] }, { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: report }] }] } },
    };
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), budgets: { maxWallTimeMs: 1_500 }, permissions: { rules: ['allow bash:sleep *'] }, memory: false });
    try {
      const session = await rein.startSession({ task: 'run the slow command through a tester' });
      expect((await session.whenQuiet()).status).toBe('budget-exhausted');
      // delegation.joined, model.attempted and session.ended travel in step records: read the log flattened, in order.
      const records = entriesOfRows(await store.read(session.id));
      const fired = records.find((record) => record.type === 'timer.fired')!;
      expect((fired.data as { elapsedMs: number }).elapsedMs).toBeGreaterThanOrEqual(1_500);
      const joinedAt = records.findIndex((record) => record.type === 'delegation.joined');
      const joined = records[joinedAt]!;
      expect(joined.data).toMatchObject({ outcome: 'unsatisfied' });
      // The root asked the model once (the delegation); nothing after the join.
      expect(records.slice(joinedAt).filter((record) => record.actor === 'root' && record.type === 'model.attempted')).toEqual([]);
      expect(records.some((record) => record.actor === 'root' && record.type === 'model.attempted')).toBe(true);
      expect(records.find((record) => record.type === 'session.ended')!.data).toMatchObject({ status: 'budget-exhausted', reason: 'wall-time budget exhausted' });
    } finally {
      await rein.close();
      await workspace.remove();
    }
  });
});
