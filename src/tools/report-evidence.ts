import { executionPassed, type CommandExecution } from '../../models/tool.records.js';
import { commandKey } from './session-tool-state.js';
import { invokesTestRunner } from '../effects/test-command.js';

/** Statuses that say the child reached a result: its test report must rest on a command it really ran. */
const concluded = new Set(['completed', 'partial']);

const exitText = (execution: CommandExecution): string =>
  execution.timedOut ? `timed out (${execution.timedOut})` : execution.exitCode === null ? `was killed (${execution.signal ?? 'signal'})` : `exited ${execution.exitCode}`;

/**
 * Check a test report's `command`, `exit_code` and `passed` against the commands the child itself ran (the latest
 * execution of the same command, whitespace aside): a report says what happened, never what the model believes.
 * A `completed` or `partial` report needs that execution, with its exit code, and `passed` exactly when it exited 0
 * (no signal, no timeout). A `blocked`, `unknown` or `out_of_scope` report may name a command that did not run, but
 * then cannot say it passed; if the command did run, the report must agree with it. Returns the problem, or
 * undefined when the report agrees with the record.
 */
export const testReportProblem = (report: Record<string, unknown>, executions: ReadonlyMap<string, CommandExecution>, verifications?: ReadonlyMap<string, string>): string | undefined => {
  const command = String(report.command ?? '');
  const execution = executions.get(commandKey(command));
  const quoted = JSON.stringify(commandKey(command).slice(0, 200));
  if (!execution) {
    if (concluded.has(String(report.status))) {
      return `no command ${quoted} ran in this task, so a ${String(report.status)} test report cannot rest on it. Run the test command with bash first and report the command exactly as you ran it, with its real exit code; if you could not run it, report status "blocked" or "unknown" with passed false`;
    }
    if (report.passed === true) return `no command ${quoted} ran in this task: a report on a command that did not run cannot say passed true`;
    return undefined;
  }
  const exitMatches = execution.exitCode === null ? report.exit_code !== 0 : report.exit_code === execution.exitCode;
  // An exit 0 is a pass only when rein recorded the run as a passing verification (when it tells which runs were).
  const verified = verifications?.get(commandKey(command));
  // A line that runs no test runner at all (`ls`) keeps the plain exit rule; one that runs a suite needs the record.
  if (executionPassed(execution) && verifications !== undefined && verified !== 'passed' && (verified !== undefined || invokesTestRunner(command))) {
    if (exitMatches && report.passed === false) return undefined;
    const why = verified === undefined ? 'is not one rein counts as a test run (its exit does not report the suite\'s: a trap, `|| true`, `; exit 0`…)' : verified === 'failed' ? "was recorded failed: the runner's own summary counts a failed test" : 'was recorded inconclusive: its output shows no count of tests that ran';
    return `the last run of ${quoted} in this task exited 0 but ${why}, so the report must say exit_code ${String(execution.exitCode)} and passed false; run the suite as a plain command to report a pass`;
  }
  const passed = executionPassed(execution);
  if (exitMatches && report.passed === passed) return undefined;
  return `the last run of ${quoted} in this task ${exitText(execution)}, so the report must say exit_code ${execution.exitCode ?? '(non-zero)'} and passed ${String(passed)} (it says exit_code ${String(report.exit_code)}, passed ${String(report.passed)})`;
};
