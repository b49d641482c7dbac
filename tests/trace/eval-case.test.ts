import type { ScriptTurnInput } from 'rein';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScriptedSession, checkEvalCase, exportEvalCase } from 'rein/testing';
import { rebuildTraceView } from '../../src/projections/rebuild.js';
import { blobText } from '../../src/session/session-records.js';
import { analyzeTrace } from '../../src/trace/trace-analyzer.js';
import { fixtureTools, fixedStats, seedStatsProject } from '../support/agent-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-eval-');
  await seedStatsProject(workspace.path);
});
afterEach(() => workspace.remove());

const session = async (turns: ScriptTurnInput[], rein: Record<string, unknown> = {}) => {
  await seedStatsProject(workspace.path);
  const run = await runScriptedSession({ workspace: workspace.path, task: 'Fix the failing test', script: { turns }, rein: { tools: fixtureTools(), ...rein } });
  return { view: rebuildTraceView(run.records), readText: blobText(run.store, run.session.id) };
};

describe('eval cases exported by the trace analyzer', () => {
  it('checks the steps: the claiming-success session fails its own case, a session that fixes and verifies passes it', async () => {
    const bad = await session([{ text: 'Testing.', toolCalls: [{ name: 'run_tests' }] }, { text: 'All tests pass now, fixed.' }]);
    const evalCase = exportEvalCase(await analyzeTrace(bad.view, bad.readText));
    expect(evalCase.assertions).toContainEqual({ type: 'final_success_requires_verification_passed' });
    expect(evalCase.steps.map((step) => step.calls.map((call) => call.name))).toEqual([['run_tests'], []]);
    expect(JSON.parse(JSON.stringify(evalCase))).toEqual(evalCase);
    const againstBad = await checkEvalCase(evalCase, bad.view, bad.readText);
    expect(againstBad.passed).toBe(false);
    expect(againstBad.results.find((result) => result.assertion.type === 'final_success_requires_verification_passed')?.passed).toBe(false);
    const good = await session([
      { text: 'Testing.', toolCalls: [{ name: 'run_tests' }] },
      { text: 'Fixing.', toolCalls: [{ name: 'write', arguments: { path: 'src/stats.js', content: fixedStats } }] },
      { text: 'Testing again.', toolCalls: [{ name: 'run_tests' }] },
      { text: 'Fixed: the tests pass.' },
    ]);
    expect((await checkEvalCase(evalCase, good.view, good.readText)).passed).toBe(true);
  });

  it('a context failure exports a context_contains_fact assertion that only a session whose model saw the fact passes', async () => {
    const cut = await session([{ text: 'Building.', toolCalls: [{ name: 'build' }] }, { text: 'The build is clean.' }], { observationLimit: 2_000 });
    const evalCase = exportEvalCase(await analyzeTrace(cut.view, cut.readText));
    const assertion = evalCase.assertions.find((entry) => entry.type === 'context_contains_fact');
    expect(assertion).toMatchObject({ fact: expect.stringContaining('ERROR src/stats.js:1') });
    expect((await checkEvalCase(evalCase, cut.view, cut.readText)).results.find((result) => result.assertion === assertion)?.passed).toBe(false);
    const whole = await session([{ text: 'Building.', toolCalls: [{ name: 'build' }] }, { text: 'The build reports that sum subtracts.' }]);
    expect((await checkEvalCase(evalCase, whole.view, whole.readText)).results.find((result) => result.assertion === assertion)?.passed).toBe(true);
  });

  it('a repeated denied call exports no_repeated_call_after_failure', async () => {
    const outside = { name: 'write', arguments: { path: '../outside.txt', content: 'x' } };
    const repeated = await session([{ text: 'Writing.', toolCalls: [outside] }, { text: 'Again.', toolCalls: [outside] }, { text: 'I could not write it.' }]);
    const evalCase = exportEvalCase(await analyzeTrace(repeated.view, repeated.readText));
    expect(evalCase.assertions).toContainEqual({ type: 'no_repeated_call_after_failure', name: 'write', arguments: outside.arguments });
    expect((await checkEvalCase(evalCase, repeated.view, repeated.readText)).passed).toBe(false);
    const once = await session([{ text: 'Writing.', toolCalls: [outside] }, { text: 'That path is outside the workspace; I stop here.' }]);
    const result = await checkEvalCase(evalCase, once.view, once.readText);
    expect(result.results.find((entry) => entry.assertion.type === 'no_repeated_call_after_failure')?.passed).toBe(true);
  });
});
