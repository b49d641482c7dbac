import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executionPassed, type CommandExecution } from '../../models/tool.records.js';
import { testReportProblem } from '../../src/tools/report-evidence.js';
import { commandKey } from '../../src/tools/session-tool-state.js';
import { propertyRuns } from '../support/temp-dir.js';

const report = (fields: Record<string, unknown>) => ({ status: 'completed', summary: 's', failing_tests: [], relevant_output: '', ...fields });
const ran = (command: string, exitCode: number | null, extra: Partial<CommandExecution> = {}): Map<string, CommandExecution> =>
  new Map([[commandKey(command), { command, exitCode, durationMs: 5, ...extra }]]);

describe('a test report is checked against what the child ran', () => {
  it('refuses a completed or partial report on a command that never ran, whatever it claims', () => {
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), new Map())).toMatch(/no command "npm test" ran/);
    expect(testReportProblem(report({ status: 'partial', command: 'npm test', exit_code: 1, passed: false }), ran('true', 0))).toMatch(/no command "npm test" ran/);
  });

  it('lets a blocked or unknown report name a command it could not run, but never as passed', () => {
    expect(testReportProblem(report({ status: 'blocked', command: 'npm test', exit_code: 1, passed: false }), new Map())).toBeUndefined();
    expect(testReportProblem(report({ status: 'unknown', command: 'npm test', exit_code: 0, passed: true }), new Map())).toMatch(/cannot say passed true/);
  });

  it('accepts the exit and verdict of the latest run of the same command (whitespace aside), and nothing else', () => {
    expect(testReportProblem(report({ command: ' npm   test', exit_code: 0, passed: true }), ran('npm test', 0))).toBeUndefined();
    expect(testReportProblem(report({ command: 'npm test', exit_code: 1, passed: false }), ran('npm test', 1))).toBeUndefined();
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), ran('npm test', 1))).toMatch(/exited 1, so the report must say exit_code 1 and passed false/);
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), ran('npm test', 0, { timedOut: 'soft' }))).toMatch(/timed out/);
    expect(testReportProblem(report({ command: 'npm test', exit_code: 137, passed: false }), ran('npm test', null, { signal: 'SIGKILL' }))).toBeUndefined();
  });

  it('an exit 0 rein did not record as a passing test run cannot be reported as passed (trial 7 G11, G3)', () => {
    const line = "trap 'exit 0' EXIT; node --test";
    expect(testReportProblem(report({ command: line, exit_code: 0, passed: true }), ran(line, 0), new Map())).toMatch(/is not one rein counts as a test run/);
    expect(testReportProblem(report({ command: line, exit_code: 0, passed: false }), ran(line, 0), new Map())).toBeUndefined();
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), ran('npm test', 0), new Map([['npm test', 'failed']]))).toMatch(/recorded failed/);
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), ran('npm test', 0), new Map([['npm test', 'inconclusive']]))).toMatch(/recorded inconclusive/);
    expect(testReportProblem(report({ command: 'npm test', exit_code: 0, passed: true }), ran('npm test', 0), new Map([['npm test', 'passed']]))).toBeUndefined();
  });

  it('property: a concluded report passes the check exactly when it restates a recorded run', () => {
    const execution = fc.record({
      command: fc.constantFrom('npm test', 'npx vitest run', 'pytest -q'),
      exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
      timedOut: fc.option(fc.constantFrom('soft' as const, 'hard' as const), { nil: undefined }),
    });
    fc.assert(
      fc.property(execution, fc.constantFrom('npm test', 'npx vitest run', 'pytest -q'), fc.integer({ min: 0, max: 255 }), fc.boolean(), (recorded, command, exitCode, passed) => {
        const run: CommandExecution = { command: recorded.command, exitCode: recorded.exitCode, durationMs: 1, ...(recorded.exitCode === null ? { signal: 'SIGKILL' } : {}), ...(recorded.timedOut ? { timedOut: recorded.timedOut } : {}) };
        const problem = testReportProblem(report({ command, exit_code: exitCode, passed }), new Map([[commandKey(run.command), run]]));
        const restates = command === run.command && passed === executionPassed(run) && (run.exitCode === null ? exitCode !== 0 : exitCode === run.exitCode);
        expect(problem === undefined).toBe(restates);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
