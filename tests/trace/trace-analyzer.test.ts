import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { runScriptedSession, type ScriptedRun } from 'rein/testing';
import { rebuildTraceView } from '../../src/projections/rebuild.js';
import { blobText } from '../../src/session/session-records.js';
import { analyzeTrace } from '../../src/trace/trace-analyzer.js';
import { renderTraceMarkdown } from '../../src/trace/trace-report.js';
import { listToArray } from '../../src/index.js';
import { fixtureTools, fixedStats, seedStatsProject } from '../support/agent-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';
import type { StepDerived } from '../../models/step.records.js';

type Turn = { text: string; toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> }> };

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-trace-');
  await seedStatsProject(workspace.path);
});
afterEach(() => workspace.remove());

const run = (turns: Turn[], rein: Record<string, unknown> = {}): Promise<ScriptedRun> =>
  runScriptedSession({ workspace: workspace.path, task: 'Fix the failing test in test/stats.test.js', script: { turns }, rein: { tools: fixtureTools(), permissions: { approveAll: true }, ...rein } });

const analyze = (records: readonly RecordEnvelope[], store: ScriptedRun['store']) => analyzeTrace(rebuildTraceView(records), blobText(store, records[0]!.stream));

const renumber = (records: readonly RecordEnvelope[]): RecordEnvelope[] => records.map((record, index) => ({ ...record, seq: index + 1 }));

const tests = { name: 'run_tests' };
const fix = { name: 'write', arguments: { path: 'src/stats.js', content: fixedStats } };

describe('trace analyzer on scripted failure sessions', () => {
  it('a failing test run followed by a success claim is a verification failure; the model is blamed only because its context held the failure', async () => {
    const session = await run([{ text: 'Running the tests.', toolCalls: [tests] }, { text: 'All tests pass now, fixed.' }]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('failed');
    expect(report.claimedSuccess).toBe(true);
    expect(report.primary).toMatchObject({ type: 'verification_contradicted_final', category: 'verification_missing', boundary: 'verification' });
    const judged = report.findings.find((finding) => finding.category === 'model_judgement_error');
    expect(judged).toMatchObject({ boundary: 'model judgement', type: 'model_judgement_error' });
    expect(judged!.fact).toMatch(/not ok|AssertionError|sum adds/);
    const flat = flattenRecords(session.records);
    const context = flat.find((record) => record.type === 'context.projected' && record.seq > flat.find((r) => r.type === 'verification.recorded')!.seq)!;
    expect(judged!.evidence).toContain(`#${context.seq}`);
  });

  it('without a recorded context snapshot the same session is unknown or mixed, never a model error', async () => {
    const session = await run([{ text: 'Running the tests.', toolCalls: [tests] }, { text: 'All tests pass now, fixed.' }]);
    // Without `context.projected`: a record of its own, or folded into a step record.
    const withoutContext = (record: RecordEnvelope): RecordEnvelope => {
      const step = record.data as StepDerived;
      return record.type === 'step.derived' && step.facts ? { ...record, data: { ...step, facts: step.facts.filter(([type]) => type !== 'context.projected') } } : record;
    };
    const stripped = renumber(session.records.filter((record) => record.type !== 'context.projected').map(withoutContext));
    const report = await analyze(stripped, session.store);
    expect(report.primary?.type).toBe('verification_contradicted_final');
    expect(report.findings.some((finding) => finding.category === 'model_judgement_error')).toBe(false);
    expect(report.findings.find((finding) => finding.category === 'unknown_or_mixed')?.unknowns.length).toBeGreaterThan(0);
    expect(report.unknowns.join('\n')).toMatch(/no recorded context snapshot/);
  });

  it('a denial the agent saw and ignored is a model judgement error at the model boundary', async () => {
    const outside = { name: 'write', arguments: { path: '../outside.txt', content: 'x' } };
    const session = await run([{ text: 'Writing the note.', toolCalls: [outside] }, { text: 'Trying again.', toolCalls: [outside] }, { text: 'I could not write the note outside the workspace.' }]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('unverified');
    expect(report.primary).toMatchObject({ type: 'denial_ignored', category: 'model_judgement_error', boundary: 'model judgement', confidence: 'high' });
    expect(report.primary!.fact).toMatch(/^Denied/);
  });

  it('a denial that never reached the model (the policy cut it) is a context failure, not a model error', async () => {
    const outside = { name: 'write', arguments: { path: '../outside.txt', content: 'x' } };
    const session = await run([{ text: 'Writing the note.', toolCalls: [outside] }, { text: 'Trying again.', toolCalls: [outside] }, { text: 'I could not write the note.' }], { context: { contextWindow: 400, reservedOutput: 0 } });
    const report = await analyze(session.records, session.store);
    expect(report.primary).toMatchObject({ category: 'context_missing', boundary: 'context projection' });
    expect(report.findings.some((finding) => finding.category === 'model_judgement_error')).toBe(false);
  });

  it('a truncated observation that hid the key line is a context failure at the observation boundary', async () => {
    const session = await run([{ text: 'Building.', toolCalls: [{ name: 'build' }] }, { text: 'The build is clean. Done.' }], { observationLimit: 2_000 });
    const settled = session.records.find((record) => record.type === 'tool.settled')!;
    expect((settled.data as { truncated?: unknown }).truncated).toBeDefined();
    const report = await analyze(session.records, session.store);
    expect(report.primary).toMatchObject({ type: 'observation_truncated_key_fact', category: 'context_missing', boundary: 'observation', confidence: 'high' });
    expect(report.primary!.fact).toContain('ERROR src/stats.js:1');
    expect(report.primary!.discoveredAt).toMatch(/^artifact:\/\//);
    expect(report.findings.map((finding) => finding.type)).toContain('missing_verification');
    expect(report.findings.some((finding) => finding.category === 'model_judgement_error')).toBe(false);
  });

  it('a failing result the context policy left out of the next input is a context failure at the projection boundary', async () => {
    const session = await run([{ text: 'Linting.', toolCalls: [{ name: 'lint' }] }, { text: 'I could not find the problem.' }], { context: { contextWindow: 400, reservedOutput: 0 } });
    const report = await analyze(session.records, session.store);
    expect(report.primary).toMatchObject({ type: 'context_projection_missing_fact', category: 'context_missing', boundary: 'context projection' });
    expect(report.primary!.fact).toContain('sum subtracts instead of adding');
    expect(report.outcome).toBe('unverified');
  });

  it('a success claim with no verification ends unverified', async () => {
    const session = await run([{ text: 'Fixing.', toolCalls: [fix] }, { text: 'Fixed: sum adds now.' }]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('unverified');
    expect(report.primary).toMatchObject({ type: 'missing_verification', category: 'verification_missing', boundary: 'verification' });
  });

  it('a passing verification before the last change does not count', async () => {
    const session = await run([
      { text: 'Fixing.', toolCalls: [fix] },
      { text: 'Testing.', toolCalls: [tests] },
      { text: 'Adding a note.', toolCalls: [{ name: 'write', arguments: { path: 'NOTES.md', content: 'sum fixed\n' } }] },
      { text: 'Done, tests pass.' },
    ]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('unverified');
    expect(report.primary?.type).toBe('verification_stale');
  });

  it('a shell command that changed code after the passing run makes it stale; one that only read does not (trial 6 F12)', async () => {
    const changed = await run([
      { text: 'Fixing.', toolCalls: [fix] },
      { text: 'Testing.', toolCalls: [tests] },
      { text: 'Tidying.', toolCalls: [{ name: 'bash', arguments: { command: "sed -i 's/+ x/- x/' src/stats.js" } }] },
      { text: 'All tests pass. Done.' },
    ]);
    const stale = await analyze(changed.records, changed.store);
    expect(stale.outcome).toBe('unverified');
    expect(stale.primary?.type).toBe('verification_stale');

    const looked = await run([
      { text: 'Fixing.', toolCalls: [fix] },
      { text: 'Testing.', toolCalls: [tests] },
      { text: 'Looking.', toolCalls: [{ name: 'bash', arguments: { command: 'cat src/stats.js | wc -l' } }] },
      { text: 'All tests pass. Done.' },
    ]);
    expect((await analyze(looked.records, looked.store)).outcome).toBe('succeeded');
  });

  it('fix then a passing test run succeeds with no findings', async () => {
    const session = await run([{ text: 'Testing.', toolCalls: [tests] }, { text: 'Fixing.', toolCalls: [fix] }, { text: 'Testing again.', toolCalls: [tests] }, { text: 'Fixed: sum adds and the test passes.' }]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('succeeded');
    expect(report.findings).toEqual([]);
    expect(report.evalCandidate).toBe(false);
  });

  it('a tool that crashes in the runtime is a tool execution error', async () => {
    const session = await run([{ text: 'Deploying.', toolCalls: [{ name: 'deploy' }] }, { text: 'Deployed.' }]);
    const report = await analyze(session.records, session.store);
    expect(report.outcome).toBe('failed');
    expect(report.primary).toMatchObject({ type: 'tool_execution_error', category: 'tool_execution_error', boundary: 'execution' });
  });

  it('an allow without rationale (a permission.decided record) is a permission misclassification', async () => {
    const session = await run([{ text: 'Fixing.', toolCalls: [fix] }, { text: 'Testing.', toolCalls: [tests] }, { text: 'Fixed and verified.' }]);
    const decided = session.records.find((record) => record.type === 'permission.decided' && (record.data as { tool: string }).tool === 'write')!;
    expect(decided.data).toMatchObject({ decision: 'allow', reason: expect.any(String) });
    const { reason: _reason, rule: _rule, ...bare } = decided.data as Record<string, unknown>;
    const records = session.records.map((record) => (record === decided ? { ...record, data: bare } : record));
    const report = await analyze(records, session.store);
    expect(report.outcome).toBe('succeeded');
    expect(report.primary).toMatchObject({ type: 'permission_allow_without_rationale', category: 'permission_misclassification', boundary: 'permission' });
    expect((await analyze(session.records, session.store)).findings.filter((finding) => finding.category === 'permission_misclassification')).toEqual([]);
  });

  it('writes a Markdown report with every section', async () => {
    const session = await run([{ text: 'Running the tests.', toolCalls: [tests] }, { text: 'All tests pass now, fixed.' }]);
    const view = rebuildTraceView(session.records);
    const report = await analyzeTrace(view, blobText(session.store, session.session.id));
    const markdown = renderTraceMarkdown(report, listToArray(view.users));
    for (const section of ['## Conclusion', '## Classification', '## Evidence', '## Impact', '## Repair suggestions', '## Eval candidate', '## Unknowns', '## Timeline']) expect(markdown).toContain(section);
    expect(markdown).toContain('`verification_missing`');
  });
});
