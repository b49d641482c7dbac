import { Command } from 'commander';
import { registerRun } from './commands/run.command.js';
import { registerResume } from './commands/resume.command.js';
import { registerReadCommands } from './commands/read-commands.js';
import { registerGraph } from './commands/graph.command.js';
import { registerTrace } from './commands/trace.command.js';
import { registerContext } from './commands/context.command.js';
import { registerInspect } from './commands/inspect.command.js';
import { registerMemory } from './commands/memory.command.js';

/** Error codes that mean the command line (or its configuration) was wrong: exit 2. */
export const usageCodes: ReadonlySet<string> = new Set(['USAGE', 'SCRIPT_INVALID', 'CONFIG_INVALID', 'STORE_INVALID_ARGUMENT', 'FORK_NOT_AT_BOUNDARY', 'TURN_NOT_FOUND', 'INSPECTOR_NOT_LOCAL']);

/** Build the `rein` command line. Exported so tests can drive it in-process. */
export const buildProgram = (setExit: (code: number) => void): Command => {
  const program = new Command();
  program
    .name('rein')
    .description('an event-sourced agent harness: every step durable, replayable and auditable')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerRun(program, setExit);
  registerResume(program, setExit);
  registerReadCommands(program);
  registerGraph(program);
  registerTrace(program);
  registerContext(program);
  registerInspect(program);
  registerMemory(program);
  return program;
};

