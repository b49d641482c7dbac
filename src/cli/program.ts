import { Command } from 'commander';
import { registerRun } from './commands/run.command.js';
import { registerResume } from './commands/resume.command.js';
import { registerReadCommands } from './commands/read-commands.js';
import { registerGraph } from './commands/graph.command.js';
import { registerTrace } from './commands/trace.command.js';
import { registerContext } from './commands/context.command.js';
import { registerInspect } from './commands/inspect.command.js';
import { registerMemory } from './commands/memory.command.js';
import { registerWorker } from './commands/worker.command.js';
import { registerStore } from './commands/store.command.js';
import { registerApprove } from './commands/approve.command.js';
import { registerMcp } from './commands/mcp.command.js';
import { registerHooks } from './commands/hooks.command.js';
import { registerSkills } from './commands/skills.command.js';
import { registerPlugins } from './commands/plugins.command.js';
import { registerSandbox } from './commands/sandbox.command.js';
import { registerChangeCommands } from './commands/changes.command.js';
import { registerExport, registerServe } from './commands/serve.command.js';
import { registerAcp } from './commands/acp.command.js';
import { registerInit } from './commands/init.command.js';
import { registerVerify } from './commands/verify.command.js';

/** Error codes that mean the command line (or its configuration) was wrong: exit 2. */
export const usageCodes: ReadonlySet<string> = new Set(['USAGE', 'SCRIPT_INVALID', 'CONFIG_INVALID', 'STORE_INVALID_ARGUMENT', 'FORK_NOT_AT_BOUNDARY', 'TURN_NOT_FOUND', 'ACTOR_NOT_FOUND', 'INSPECTOR_NOT_LOCAL', 'QUEUE_UNSUPPORTED', 'TELEMETRY_CONFIG_INVALID', 'HOOK_CONFIG_INVALID', 'MCP_SERVER_NOT_FOUND', 'MCP_UNTRUSTED', 'HOOK_UNTRUSTED', 'PRICE_UNKNOWN', 'BUDGET_NOT_RAISED']);

/*
 * How a command joins the CLI (and keeps `rein --help`, `rein sessions` and `rein show` fast to start):
 *
 *   commands/<name>.command.ts   declares the command: its arguments, its flags (shared ones from
 *                                `../command-options.js`) and an action that only loads the implementation:
 *
 *       export const registerSandbox = (program: Command): void => {
 *         addCommonOptions(program.command('sandbox').description('…').option('--check', '…'))
 *           .action(async (options: SandboxOptions) => (await import('./sandbox.action.js')).sandboxCommand(options));
 *       };
 *
 *   commands/<name>.action.ts    does the work; it may import anything (the store, createRein, zod, xstate…).
 *
 * A `.command.ts` file imports nothing at run time but `commander` (types) and `../command-options.js`: every one of
 * them is loaded to build the program, so one heavy import there slows every command, `--help` included.
 * `tests/cli/startup-modules.test.ts` fails when `rein --help` loads a package it does not need.
 */

type Register = (program: Command, setExit: (code: number) => void) => void;

/**
 * Every top-level command with the function that declares it. A run builds only the command it invokes (declaring all
 * of them, with their options, was ~10% of `rein sessions`' start-up); `rein`, `rein --help`, `rein help` and an
 * unknown command build them all. `tests/cli/program.test.ts` checks this table against what each function declares.
 */
export const commandRegistrars: ReadonlyArray<{ names: readonly string[]; register: Register }> = [
  // First in `rein --help`: the first command a new user runs.
  { names: ['init'], register: (program) => registerInit(program) },
  { names: ['run'], register: registerRun },
  { names: ['resume'], register: registerResume },
  { names: ['sessions', 'show', 'replay', 'fork'], register: (program) => registerReadCommands(program) },
  { names: ['graph'], register: (program) => registerGraph(program) },
  { names: ['trace'], register: (program) => registerTrace(program) },
  { names: ['context'], register: (program) => registerContext(program) },
  { names: ['inspect'], register: (program) => registerInspect(program) },
  { names: ['memory'], register: (program) => registerMemory(program) },
  { names: ['worker'], register: (program) => registerWorker(program) },
  { names: ['store'], register: (program) => registerStore(program) },
  { names: ['approve'], register: (program) => registerApprove(program) },
  { names: ['mcp'], register: (program) => registerMcp(program) },
  { names: ['hooks'], register: (program) => registerHooks(program) },
  { names: ['skills'], register: (program) => registerSkills(program) },
  { names: ['plugins'], register: registerPlugins },
  { names: ['sandbox'], register: (program) => registerSandbox(program) },
  { names: ['diff', 'rewind', 'compare'], register: registerChangeCommands },
  { names: ['serve', 'ui'], register: (program) => registerServe(program) },
  { names: ['export'], register: (program) => registerExport(program) },
  { names: ['acp'], register: (program) => registerAcp(program) },
  { names: ['verify'], register: (program) => registerVerify(program) },
];

const programExamples = `
Examples:
  rein init                                                                set up a project: a commented rein.config.json
  rein run "fix the failing test" --provider openai --model gpt-4.1-mini     run a task (the key from OPENAI_API_KEY)
  rein run --script script.json                                            the scripted model: no key, no network
  rein sessions                                                            what ran here, how it ended
  rein trace <id>                                                          why it ended that way
  rein resume <id>                                                         continue a paused or interrupted session
  rein help run                                                            every flag of a command
`;

/**
 * Build the `rein` command line. With `argv` (`process.argv`), only the invoked command is declared when it is a known
 * one; without it, every command. Exported so tests can drive it in-process.
 */
export const buildProgram = (setExit: (code: number) => void, argv?: readonly string[]): Command => {
  const program = new Command();
  program
    .name('rein')
    .description('an event-sourced agent harness: every step durable, replayable and auditable')
    .version('0.1.0')
    // A command-line mistake is one typed line like every other error (`rein: USAGE: …`, exit 2), printed by
    // `main`: commander's own `error: …` line and the help text after it are not written.
    .configureOutput({ outputError: () => undefined })
    .exitOverride()
    // The program takes arguments (a plugin's commands), which hides commander's implicit `help` command: declared, so
    // `rein help <command>` prints that command's help as `rein <command> --help` does.
    .helpCommand(true)
    .addHelpText('after', programExamples);
  const invoked = argv?.[2];
  const only = commandRegistrars.filter((entry) => invoked !== undefined && entry.names.includes(invoked));
  for (const entry of only.length > 0 ? only : commandRegistrars) entry.register(program, setExit);
  return program;
};
