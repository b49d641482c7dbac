import type { ToolCall } from '../../models/model.records.js';
import { executionPassed } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { keyLines } from '../projections/key-lines.js';
import { runsTestSuite } from './test-command.js';
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
export const verificationOf = (call: Pick<ToolCall, 'name' | 'arguments' | 'callId'>, effectId: string, outcome: ToolOutcome, classified: { command?: string }): VerificationRecorded | undefined => {
  const execution = outcome.execution;
  if (!execution) return undefined;
  const text = outputText(outcome.observation);
  const lines = keyLines(text, 10);
  const summary = (lines.length > 0 ? lines : text.trimEnd().split('\n').slice(-3)).join('\n').slice(0, 2_000);
  return {
    name: call.name,
    status: executionPassed(execution) ? 'passed' : 'failed',
    callId: call.callId,
    effectId,
    command: classified.command ?? execution.command,
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
    exitCode: execution.exitCode,
    ...(execution.signal ? { signal: execution.signal } : {}),
    ...(execution.timedOut ? { timedOut: execution.timedOut } : {}),
    durationMs: execution.durationMs,
    summary,
    ...(outcome.truncated ? { artifact: outcome.truncated.artifact } : {}),
  };
};
