import type { Command } from 'commander';
import { addBudgetOptions, addCapabilityOptions, addCommonOptions, addPermissionOptions, addPluginOptions, addProviderOptions } from '../command-options.js';
import type { RunOptions } from './run.flags.js';

export { addBudgetOptions, addCommonOptions } from '../command-options.js';

/**
 * `rein run [task]`: start a session in the workspace with the configured provider and drive it until it ends or
 * needs a person. With `--provider recorded --from <id>` the task and budgets default to the replayed session's.
 */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '');
  // The flags most runs need come first in --help: which model, what it may do unasked, where.
  addProviderOptions(command, 'scripted provider: play this JSON script (selects --provider scripted)');
  addPermissionOptions(command.option('--yes', 'answer every approval request with yes (deny rules and the workspace boundary still hold); also trusts the workspace\'s MCP configuration and untrusted project plugins; with --detach, a worker that resumes the session also reruns in-doubt calls that need confirmation'));
  addBudgetOptions(addCommonOptions(command));
  addCapabilityOptions(
    addPluginOptions(
      command
        .option('--no-memory', "run without the workspace's long-term memory (nothing injected or read, memory_read reports it disabled, no end-of-session pass): e.g. while its stream is damaged")
        .option('--detach', 'queue the session for rein worker and print its id (PostgreSQL store only)')
        .option('--inspect [ws-url]', 'stream the live actors to a Stately inspector on this machine (default ws://127.0.0.1:8080; start one with rein inspect --serve)')
        .option('--otlp <base-url>', 'send every span to this OpenTelemetry collector over OTLP/HTTP (<base-url>/v1/traces), as OTEL_EXPORTER_OTLP_ENDPOINT does')
        .option('--output-schema <file.json>', 'the final answer must be JSON valid against this JSON Schema (an invalid one goes back to the model with the errors, up to 3 times; then the session fails with OUTPUT_INVALID); the answer is session.ended.output'),
    ),
  )
    .addHelpText('after', runExamples)
    .action(async (task: string, options: RunOptions) => (await import('./run.action.js')).runCommand(task, options, setExit));
};

const runExamples = `
Examples:
  rein run "fix the failing test" --provider openai --model gpt-4.1-mini     the key from OPENAI_API_KEY
  rein run "add a --verbose flag" --approve write --approve 'bash:npm test'  those calls run unasked
  rein run --script script.json                                            the scripted model (no key, no network)
  rein run "tidy the README" --mode plan --json                            read-only tools; one JSON record per line
  rein inspect --serve & rein run "…" --inspect                            watch the live actors in the inspector
`;
