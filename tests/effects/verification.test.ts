import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { CommandExecution } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { createMemoryEventStore, runScriptedSession } from 'rein/testing';
import { verificationOf } from '../../src/effects/verification.js';
import { createRein } from '../../src/rein.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { delegate, submit, actorProvider, validReport } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** A tool named like a test runner that reports whatever execution it is given (or none: a claim). */
const runner = (name: string, execution?: CommandExecution) =>
  defineTool({
    name,
    description: 'Run the checks.',
    parameters: z.object({ command: z.string().optional() }).strict(),
    annotations: readOnlyAnnotations,
    risk: 'execute',
    sideEffect: 'process',
    resumePolicy: 'rerun-after-check',
    execute: async () => ({ ok: true, output: 'all green, trust me', ...(execution ? { execution } : {}) }),
  });

const verifications = (records: readonly RecordEnvelope[]) => flattenRecords(records).filter((record) => record.type === 'verification.recorded').map((record) => record.data as VerificationRecorded);

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-verification-');
});
afterEach(() => workspace.remove());

describe('a verification comes from what ran', () => {
  it('its status is the exit: 0 passes; a non-zero exit, a signal or a timeout fails; no exit on record is no verification', () => {
    const call = { name: 'bash', arguments: { command: 'npm test' }, callId: 'root:e1.0' };
    const outcome = (execution?: CommandExecution, stdout = 'not ok 1 - adds\n# pass 0\n# fail 1\n') => ({ status: 'ok' as const, observation: JSON.stringify({ stdout, stderr: '' }), ...(execution ? { execution } : {}) });
    const run = (fields: Partial<CommandExecution>, stdout = 'ok 1 - adds\n# pass 1\n# fail 0\n') => verificationOf(call, 'root:e2', outcome({ command: 'npm test', exitCode: 0, durationMs: 5, ...fields }, stdout), { command: 'npm test' });
    expect(run({})).toMatchObject({ status: 'passed', exitCode: 0, durationMs: 5, command: 'npm test' });
    expect(run({ exitCode: 1 })).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(run({ exitCode: null, signal: 'SIGKILL' })).toMatchObject({ status: 'failed', exitCode: null, signal: 'SIGKILL' });
    expect(run({ exitCode: 0, timedOut: 'soft' })).toMatchObject({ status: 'failed', timedOut: 'soft' });
    // The summary is read from the command's output, not from the JSON wrapped around it.
    expect(run({ exitCode: 1 }, 'not ok 1 - adds\n')!.summary).toBe('not ok 1 - adds');
    // Trial 7 G11: an exit 0 whose runner's own summary counts a failure is failed (an exit rewritten by the line).
    expect(run({}, 'not ok 1 - adds\n# pass 0\n# fail 1\n')).toMatchObject({ status: 'failed', exitCode: 0 });
    expect(run({}, 'Tests: 1 failed, 2 passed, 3 total\n')).toMatchObject({ status: 'failed' });
    expect(run({}, '=== 1 failed, 2 passed in 0.12s ===\n')).toMatchObject({ status: 'failed' });
    expect(run({}, '--- FAIL: TestAdd (0.00s)\nFAIL\n')).toMatchObject({ status: 'failed' });
    expect(run({}, 'test result: FAILED. 1 passed; 1 failed; 0 ignored\n')).toMatchObject({ status: 'failed' });
    // Trial 7 G3: an exit 0 that cannot show a test ran (no count) is inconclusive, unless only a checker ran.
    expect(run({}, '..\n')).toMatchObject({ status: 'inconclusive' });
    const tsc = { name: 'bash', arguments: { command: 'npx tsc --noEmit' }, callId: 'root:e1.0' };
    expect(verificationOf(tsc, 'root:e2', outcome({ command: 'npx tsc --noEmit', exitCode: 0, durationMs: 5 }, ''), { command: 'npx tsc --noEmit' })).toMatchObject({ status: 'passed' });
    // npm test: the package script on record decides — one that masks the exit is not the suite's.
    const masked = verificationOf(call, 'root:e2', outcome({ command: 'npm test', exitCode: 0, durationMs: 5 }, 'ok 1 - adds\n# pass 1\n# fail 0\n'), { command: 'npm test' }, { name: 'test', script: 'node --test || true' });
    expect(masked).toMatchObject({ status: 'inconclusive', packageScript: { name: 'test', script: 'node --test || true' } });
    expect(verificationOf(call, 'root:e2', outcome(), { command: 'npm test' })).toBeUndefined();
  });

  it('in a session: a tool that claims without running, or a report naming a command, records nothing; a tool that ran records its exit', async () => {
    const tools = [...builtinTools(), runner('run_tests'), runner('report'), runner('check', { command: 'make check', exitCode: 2, durationMs: 40 })];
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: {
        turns: [
          { text: 'Testing.', toolCalls: [{ name: 'run_tests', arguments: {} }, { name: 'report', arguments: { command: 'npm test' } }, { name: 'check', arguments: {} }] },
          { text: 'All checks pass.' },
        ],
      },
      rein: { tools, permissions: { approveAll: true } },
    });
    expect(verifications(run.records)).toEqual([expect.objectContaining({ name: 'check', status: 'failed', command: 'make check', exitCode: 2, durationMs: 40 })]);
  });

  it('a child tester whose report names `npm test` as passed is not a verification, and without that run it is no report either', async () => {
    const store = createMemoryEventStore();
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
    const claim = submit(validReport('test-report', 'completed'));
    const provider = actorProvider({ root: [delegate([{ id: 't', role: 'tester', objective: 'run the tests' }]), { text: 'Done: the tests pass.' }], t: [claim, claim] });
    const rein = await createRein({ store, workspace: workspace.path, provider, sandbox: { loginShell: false } });
    const session = await rein.startSession({ task: 'have the tests checked' });
    expect((await session.whenQuiet()).status).toBe('completed');
    const records = await store.read(session.id);
    // No `npm test` ran in the child: both reports are refused at runtime validation, and the child fails its contract.
    const refused = flattenRecords(records).filter((record) => record.type === 'tool.rejected' && (record.data as { code: string }).code === 'report_unverified');
    expect(refused).toHaveLength(2);
    expect(flattenRecords(records).some((record) => record.type === 'delegation.completed')).toBe(false);
    expect(flattenRecords(records).find((record) => record.type === 'delegation.failed')?.data).toMatchObject({ failureClass: 'contract' });
    expect(flattenRecords(records).find((record) => record.type === 'delegation.joined')?.data).toMatchObject({ outcome: 'unsatisfied' });
    expect(verifications(records)).toEqual([]);
  });
});
