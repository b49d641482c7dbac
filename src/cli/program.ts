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
import { registerSkills } from './commands/skills.command.js';
import { registerPlugins } from './commands/plugins.command.js';
import { registerSandbox } from './commands/sandbox.command.js';

/** Error codes that mean the command line (or its configuration) was wrong: exit 2. */
export const usageCodes: ReadonlySet<string> = new Set(['USAGE', 'SCRIPT_INVALID', 'CONFIG_INVALID', 'STORE_INVALID_ARGUMENT', 'FORK_NOT_AT_BOUNDARY', 'TURN_NOT_FOUND', 'ACTOR_NOT_FOUND', 'INSPECTOR_NOT_LOCAL', 'QUEUE_UNSUPPORTED', 'TELEMETRY_CONFIG_INVALID', 'HOOK_CONFIG_INVALID', 'MCP_SERVER_NOT_FOUND', 'MCP_UNTRUSTED']);

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

/** Build the `rein` command line. Exported so tests can drive it in-process. */
export const buildProgram = (setExit: (code: number) => void): Command => {
  const program = new Command();
  program
    .name('rein')
    .description('an event-sourced agent harness: every step durable, replayable and auditable')
    .version('0.1.0')
    // A command-line mistake is one typed line like every other error (`rein: USAGE: …`, exit 2), printed by
    // `main`: commander's own `error: …` line and the help text after it are not written.
    .configureOutput({ outputError: () => undefined })
    .exitOverride();
  registerRun(program, setExit);
  registerResume(program, setExit);
  registerReadCommands(program);
  registerGraph(program);
  registerTrace(program);
  registerContext(program);
  registerInspect(program);
  registerMemory(program);
  registerWorker(program);
  registerStore(program);
  registerApprove(program);
  registerMcp(program);
  registerSkills(program);
  registerPlugins(program, setExit);
  registerSandbox(program);
  return program;
};

