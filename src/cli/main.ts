#!/usr/bin/env node
import { CommanderError } from 'commander';
import { buildProgram, usageCodes } from './program.js';
import { ExitCode } from './exit-codes.js';
import { cliErrorOf } from './cli-errors.js';

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
    const { code: errorCode, message } = cliErrorOf(error);
    process.stderr.write(`rein: ${errorCode}: ${message}\n`);
    process.exitCode = usageCodes.has(errorCode) ? ExitCode.usage : ExitCode.failed;
    return;
  }
  process.exitCode = code;
};

await main();
