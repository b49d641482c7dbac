#!/usr/bin/env node
import { CommanderError } from 'commander';
import { buildProgram, usageCodes } from './program.js';
import { ExitCode } from './exit-codes.js';
import { cliErrorOf } from './cli-errors.js';
import { outputClosed } from './output-closed.js';

/** Commander's codes for help it printed (not a mistake to report). */
const helpCodes: ReadonlySet<string> = new Set(['commander.help', 'commander.helpDisplayed', 'commander.version']);

/** A log whose chain fails ends every command with its own code: broken (4) apart from intact but unauthenticated (5). */
const chainExitCodes: Readonly<Record<string, number>> = { CHAIN_BROKEN: ExitCode.chainBroken, CHAIN_UNAUTHENTICATED: ExitCode.chainUnauthenticated };

/** `error: unknown option '--bogus'` → `unknown option '--bogus' (see rein --help)`. */
const usageMessage = (message: string): string => `${message.replace(/^error: /, '').trim()} (see rein <command> --help)`;

const main = async (): Promise<void> => {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // A session that runs is interrupted and recorded as such; the writes that follow fail quietly.
    if (outputClosed()) return;
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  let code: number = ExitCode.ok;
  const program = buildProgram((next) => {
    code = next;
  }, process.argv);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // `--help`, `--version` (and a bare `rein`, which prints the help) end here too: they already wrote their text.
      if (error.exitCode !== 0 && !helpCodes.has(error.code)) (await import('./print-text.js')).printText(`rein: USAGE: ${usageMessage(error.message)}\n`, process.stderr);
      process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      return;
    }
    const { code: errorCode, message } = cliErrorOf(error);
    // Loaded only when printing: `rein --help` loads nothing outside the CLI's declarations.
    const { printText } = await import('./print-text.js');
    printText(`rein: ${errorCode}: ${message}\n`, process.stderr);
    process.exitCode = usageCodes.has(errorCode) ? ExitCode.usage : (chainExitCodes[errorCode] ?? ExitCode.failed);
    return;
  }
  process.exitCode = code;
};

await main();
// The command is done and has closed what it opened. Whatever a plugin left running (a timer, a pool, a watcher) must
// not keep the process, and the exit code with it, from its caller: once stdout has drained, a timer that does not
// itself hold the process ends it after a grace second if nothing else did.
process.stdout.write('', () => setTimeout(() => process.exit(), 1_000).unref());
