import type { ToolCall } from '../../models/model.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { keyLines } from '../projections/key-lines.js';
import type { ToolOutcome } from '../tools/observation.js';

/** Decides whether a tool call is a verification (a test run); returns the command it ran, if any, or undefined. */
export type VerificationClassifier = (call: Pick<ToolCall, 'name' | 'arguments'>) => { command?: string } | undefined;

const testCommand =
  /(^|[\s;&|(])(npm (run )?test|npm run (check|verify)|npx (vitest|jest|mocha|tsc)|yarn (run )?test|pnpm (run )?test|node --test|vitest|jest|mocha|pytest|python3? -m (pytest|unittest)|go (test|vet)|cargo (test|check)|make (test|check)|mvn (test|verify)|gradle test|\.\/gradlew test|dotnet test|rspec|phpunit|ctest|tox)\b/;

/**
 * The default classifier: a call with a string `command` argument is a verification when the command runs a test
 * suite or checker (`npm test`, `node --test`, `pytest`, `go test`, `cargo test`, `make test`, …); a call without
 * one is a verification when the tool's name says so (`run_tests`, `test`, `verify`, `check`, `type_check`, …).
 */
export const defaultVerificationClassifier: VerificationClassifier = (call) => {
  const command = call.arguments.command;
  if (typeof command === 'string') return testCommand.test(command) ? { command } : undefined;
  return /(^|_)(tests?|verify|verification|check)($|_)/i.test(call.name) ? {} : undefined;
};

/** The `verification.recorded` data for a verification that ran: passed when the tool succeeded, key lines as summary. */
export const verificationOf = (call: Pick<ToolCall, 'name' | 'arguments' | 'callId'>, effectId: string, outcome: ToolOutcome, classified: { command?: string }): VerificationRecorded => {
  const lines = keyLines(outcome.observation, 10);
  const summary = (lines.length > 0 ? lines : outcome.observation.split('\n').slice(-3)).join('\n').slice(0, 2_000);
  return {
    name: call.name,
    status: outcome.status === 'ok' ? 'passed' : 'failed',
    callId: call.callId,
    effectId,
    ...(classified.command === undefined ? {} : { command: classified.command }),
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
    summary,
    ...(outcome.truncated ? { artifact: outcome.truncated.artifact } : {}),
  };
};
