import { CommanderError } from 'commander';
import { buildProgram, usageCodes } from './program.js';
import { ExitCode } from './exit-codes.js';
import { cliErrorOf } from './cli-errors.js';
import { noteOpenedStore, openedStoreName } from './opened-store.js';

/** Commander's codes for help it printed (not a mistake to report). */
const helpCodes: ReadonlySet<string> = new Set(['commander.help', 'commander.helpDisplayed', 'commander.version']);

/** A log whose chain fails ends every command with its own code: broken (4) apart from intact but unauthenticated (5). */
const chainExitCodes: Readonly<Record<string, number>> = { CHAIN_BROKEN: ExitCode.chainBroken, CHAIN_UNAUTHENTICATED: ExitCode.chainUnauthenticated };

/** `error: unknown option '--bogus'` → `unknown option '--bogus' (see rein <command> --help)`. */
const usageMessage = (message: string): string => `${message.replace(/^error: /, '').trim()} (see rein <command> --help)`;

/**
 * Run one `rein` command line (`argv` as `process.argv`: the node binary, the script, then the arguments) in this
 * process and resolve with its exit code; errors are printed as `rein: <CODE>: <message>` on stderr. The binary's
 * entry (`main.ts`) and in-process tests both use it.
 */
export const runCommandLine = async (argv: readonly string[]): Promise<number> => {
  let code: number = ExitCode.ok;
  noteOpenedStore(undefined);
  const program = buildProgram((next) => {
    code = next;
  }, argv);
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // `--help`, `--version` (and a bare `rein`, which prints the help) end here too: they already wrote their text.
      if (error.exitCode !== 0 && !helpCodes.has(error.code)) (await import('./print-text.js')).printText(`rein: USAGE: ${usageMessage(error.message)}\n`, process.stderr);
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    const { code: errorCode, message: said } = cliErrorOf(error);
    // "no session … in this store": which store, so a command run in the wrong folder says where it looked.
    const store = errorCode === 'SESSION_NOT_FOUND' && said.endsWith(' in this store') ? openedStoreName() : undefined;
    const message = store === undefined ? said : `${said} (${store}; --workspace <dir> or --store <dir|url> reads another)`;
    // Loaded only when printing: `rein --help` loads nothing outside the CLI's declarations.
    const { printText } = await import('./print-text.js');
    printText(`rein: ${errorCode}: ${message}\n`, process.stderr);
    return usageCodes.has(errorCode) ? ExitCode.usage : (chainExitCodes[errorCode] ?? ExitCode.failed);
  }
  return code;
};
