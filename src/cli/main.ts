#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerRun } from './commands/run.command.js';
import { registerResume } from './commands/resume.command.js';
import { registerReadCommands } from './commands/read-commands.js';
import { registerGraph } from './commands/graph.command.js';
import { registerTrace } from './commands/trace.command.js';
import { registerContext } from './commands/context.command.js';
import { registerInspect } from './commands/inspect.command.js';
import { registerMemory } from './commands/memory.command.js';
import { ExitCode } from './exit-codes.js';

const usageCodes = new Set(['USAGE', 'SCRIPT_INVALID', 'CONFIG_INVALID', 'STORE_INVALID_ARGUMENT', 'FORK_NOT_AT_BOUNDARY', 'TURN_NOT_FOUND', 'INSPECTOR_NOT_LOCAL']);

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

const main = async (): Promise<void> => {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  let code: number = ExitCode.ok;
  const program = buildProgram((next) => {
    code = next;
  });
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      return;
    }
    const coded = error as { code?: unknown; message?: string; seq?: number };
    const errorCode = typeof coded.code === 'string' ? coded.code : 'ERROR';
    process.stderr.write(`rein: ${errorCode}: ${coded.message ?? String(error)}\n`);
    process.exitCode = usageCodes.has(errorCode) ? ExitCode.usage : ExitCode.failed;
    return;
  }
  process.exitCode = code;
};

await main();
