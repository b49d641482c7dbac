import type { Command } from 'commander';
import { addCommonOptions } from '../command-options.js';
import type { TraceOptions } from './trace.flags.js';

/**
 * `rein trace <id>`: the timeline (goal → context → model → intent → permission → execution → observation →
 * verification) and the analyzer's findings; `--out` writes the Markdown report, `--eval [file]` the eval case.
 * Strictly read-only: the store is read through copies, no tool runs, no model is called.
 */
export const registerTrace = (program: Command): void => {
  const command = program
    .command('trace')
    .description('analyse a recorded session: timeline, failure class and boundary, Markdown report (read-only)')
    .argument('<id>', 'session id')
    .option('--out <file>', 'write the Markdown report to this file')
    .option('--eval [file]', 'export an eval case that checks the agent\'s steps (to the file, or stdout)')
    .option('--format <format>', 'text (the default), or otlp-json: the session\'s OpenTelemetry spans as one OTLP/JSON document on stdout')
    .option('--otlp <base-url>', 'export the session\'s OpenTelemetry spans to this collector over OTLP/HTTP (<base-url>/v1/traces)')
    .option('--raw', 'keep the secrets the session met in the report, --out, --eval and --json (redacted by default)');
  addCommonOptions(command).action(async (id: string, options: TraceOptions) => (await import('./trace.action.js')).traceCommand(id, options));
};
