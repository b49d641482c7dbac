import type { ToolCall } from '../../models/model.records.js';
import { executionPassed } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { keyLines } from '../projections/key-lines.js';
import { checksOnly, runsTestSuite, selectsTests } from './test-command.js';
import type { ToolOutcome } from '../tools/observation.js';

/**
 * Decides whether a tool call is a verification (a test run); returns the command it ran, if any, or undefined.
 * Only a call that executed a command (its result reports an exit) is ever recorded as one.
 */
export type VerificationClassifier = (call: Pick<ToolCall, 'name' | 'arguments'>) => { command?: string } | undefined;

/**
 * The default classifier: a call with a string `command` argument is a verification when the line runs a test suite
 * or checker and reports its exit (`npm test`, `node --test`, `pytest`, `go test`, `cargo test`, `make test`, …;
 * see `runsTestSuite`: naming a runner is not running it, and a masked exit is not the suite's); a call without one
 * is a verification when the tool's name says so (`run_tests`, `test`, `verify`, `check`, `type_check`, …).
 */
export const defaultVerificationClassifier: VerificationClassifier = (call) => {
  const command = call.arguments.command;
  if (typeof command === 'string') return runsTestSuite(command) ? { command } : undefined;
  return /(^|_)(tests?|verify|verification|check)($|_)/i.test(call.name) ? {} : undefined;
};

const sum = (text: string, pattern: RegExp): number | undefined => {
  // A summary line whose passed count is absent (`Tests: 1 skipped, 1 total`) counts zero.
  const counts = [...text.matchAll(pattern)].map((match) => Number(match[1] ?? 0));
  return counts.length === 0 ? undefined : counts.reduce((total, count) => total + count, 0);
};

/**
 * How many tests a runner's own summary says passed, or undefined when no summary is recognised: `node --test`
 * (`# pass 0` / `ℹ pass 0`), Jest (`Tests: … total`), Vitest (`Tests  1 skipped (1)`, `No test files found`), Mocha
 * (`0 passing`), pytest (`no tests ran`, `=== 2 passed in 0.1s ===`), Go (`[no tests to run]` on every package), Cargo
 * (`test result: ok. 0 passed`).
 */
export const passedTests = (text: string): number | undefined => {
  const passed = [
    sum(text, /^\s*[#ℹ]\s*pass (\d+)\s*$/gm),
    sum(text, /^\s*Tests:\s+(?:.*?(\d+) passed)?.*\d+ total\s*$/gm),
    sum(text, /^\s*Tests\s+(?:.*?(\d+) passed)?.*\(\d+\)\s*$/gm),
    sum(text, /^\s*(\d+) passing\b/gm),
    sum(text, /^=+ (?:.*?(\d+) passed)?.* in [\d.]+s(?: \([^)]*\))? =+$/gm),
    sum(text, /^test result: \w+\. (\d+) passed;/gm),
  ];
  const counted = passed.filter((count): count is number => count !== undefined);
  if (counted.length > 0) return counted.reduce((all, count) => all + count, 0);
  if (/no tests? (?:files? )?found|no tests ran|\[no tests to run\]/i.test(text)) return /^ok\s+\S+\s+[\d.]+s\s*$/m.test(text) ? undefined : 0;
  return undefined;
};

/**
 * True when a test runner's own summary says that no test ran — so an exit 0 verified nothing. False when any
 * summary counts a passed test, and when no summary is recognised.
 */
export const ranNoTest = (text: string): boolean => passedTests(text) === 0;

/**
 * How many tests a runner's own summary says failed, or undefined when no failure count is recognised: `node --test`
 * (`# fail 1` / `ℹ fail 1`), Jest (`Tests: 1 failed, …`), Vitest (`Tests  1 failed | …`), Mocha (`1 failing`), pytest
 * (`=== 1 failed, 2 passed in 0.1s ===`), Go (a `FAIL` or `--- FAIL` line), Cargo (`test result: FAILED.`).
 */
export const failedTests = (text: string): number | undefined => {
  const failed = [
    sum(text, /^\s*[#ℹ]\s*fail (\d+)\s*$/gm),
    sum(text, /^\s*Tests:?\s+(\d+) failed\b/gm),
    sum(text, /^\s*(\d+) failing\b/gm),
    sum(text, /^=+ (?:.*?\b)?(\d+) (?:failed|errors?)\b.* in [\d.]+s(?: \([^)]*\))? =+$/gm),
    sum(text, /^test result: FAILED\. \d+ passed; (\d+) failed;/gm),
    /^(?:FAIL|--- FAIL)\b/m.test(text) ? 1 : undefined,
  ];
  const counted = failed.filter((count): count is number => count !== undefined);
  return counted.length === 0 ? undefined : counted.reduce((all, count) => all + count, 0);
};

/** The package script a `npm test` / `npm run X` line ran, as `package.json` held it when the call was made. */
export interface PackageScript {
  name: string;
  /** The script's text; absent when `package.json` had no such script (or could not be read as one). */
  script?: string;
}

/**
 * Why an exit 0 verified nothing, or undefined when it is a pass. The runner's own summary says no test ran; or
 * its output shows no summary counting a passed test (a dot reporter, a file with no tests, output sent elsewhere)
 * while the command runs tests, not only a checker such as `tsc` whose exit is all it reports; or the command runs a
 * package script that, as `package.json` held it, does not report a test suite's exit (`echo ok`, `node --test || true`).
 */
export const inconclusiveReason = (command: string | undefined, text: string, packageScript?: PackageScript): string | undefined => {
  if (packageScript?.script !== undefined && !runsTestSuite(packageScript.script)) return `the package.json script "${packageScript.name}" (${packageScript.script.slice(0, 200)}) does not report a test suite's exit`;
  const passed = passedTests(text);
  if (passed === 0) return "no test ran (the runner's own summary says so)";
  if (passed !== undefined) return undefined;
  const checked = packageScript?.script ?? command;
  if (checked !== undefined && checksOnly(checked)) return undefined;
  if (command !== undefined && selectsTests(command)) return 'the command selects tests by name and its output shows no summary of a test that passed';
  return "its output shows no runner summary counting a test that passed (a reporter that prints no count, a file with no test, output sent elsewhere): exit 0 alone cannot show a test ran";
};

/** Why an exit 0 is a failure: the runner's own summary counts failed tests (the line's exit status was rewritten). */
export const contradictedReason = (text: string): string | undefined => {
  const failed = failedTests(text);
  return failed !== undefined && failed > 0 ? `the runner's own summary counts ${String(failed)} failed test(s) though the command exited 0` : undefined;
};

/** The output a person reads: a shell tool's JSON result is unwrapped to its stdout and stderr. */
const outputText = (observation: string): string => {
  if (!observation.startsWith('{')) return observation;
  try {
    const result = JSON.parse(observation) as { stdout?: unknown; stderr?: unknown };
    const streams = [result.stdout, result.stderr].filter((stream): stream is string => typeof stream === 'string' && stream.length > 0);
    return streams.length > 0 ? streams.join('\n') : observation;
  } catch {
    return observation;
  }
};

/**
 * The `verification.recorded` data for a verification that ran, or undefined when the call executed no command (a
 * report that names a command, a claim, a tool that reports no exit): those are never verifications. The status
 * is the run's: `passed` only for exit code 0 with no signal and no timeout. The summary holds the key lines.
 */
export const verificationOf = (call: Pick<ToolCall, 'name' | 'arguments' | 'callId'>, effectId: string, outcome: ToolOutcome, classified: { command?: string }, packageScript?: PackageScript): VerificationRecorded | undefined => {
  const execution = outcome.execution;
  if (!execution) return undefined;
  const text = outputText(outcome.observation);
  const lines = keyLines(text, 10);
  const summary = (lines.length > 0 ? lines : text.trimEnd().split('\n').slice(-3)).join('\n').slice(0, 2_000);
  const passed = executionPassed(execution);
  const command = classified.command ?? execution.command;
  // Exit 0 whose runner's own summary counts a failure is a failure; one that cannot show a test ran verified nothing.
  const contradicted = passed ? contradictedReason(text) : undefined;
  const inconclusive = passed && contradicted === undefined ? inconclusiveReason(command, text, packageScript) : undefined;
  const reason = contradicted ?? inconclusive;
  return {
    name: call.name,
    status: contradicted !== undefined ? 'failed' : inconclusive !== undefined ? 'inconclusive' : passed ? 'passed' : 'failed',
    callId: call.callId,
    effectId,
    command,
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
    exitCode: execution.exitCode,
    ...(execution.signal ? { signal: execution.signal } : {}),
    ...(execution.timedOut ? { timedOut: execution.timedOut } : {}),
    durationMs: execution.durationMs,
    summary: reason !== undefined ? `${reason}\n${summary}`.slice(0, 2_000) : summary,
    ...(packageScript ? { packageScript } : {}),
    ...(outcome.truncated ? { artifact: outcome.truncated.artifact } : {}),
  };
};
