import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';

export type { DiffFlags, RewindFlags } from './changes.flags.js';
import type { DiffFlags, RewindFlags } from './changes.flags.js';

/** `rein diff`, `rein rewind`, `rein compare`: what sessions changed in the workspace, going back, and two side by side. */
export const registerChangeCommands = (program: Command, setExit: (code: number) => void): void => {
  addCommonOptions(
    program
      .command('diff')
      .description("what a session changed in the workspace, as unified diffs: every step's changes in order, one step's (--at), one call's (--call), or the net change (--net)")
      .argument('<id>', 'session id')
      .option('--at <seq>', "the changes of the step holding this seq (the call its record starts or settles)")
      .option('--call <id>', 'the changes of one call (effect id root:e4 or call id root:e3.0)')
      .option('--stat', 'a diff stat instead of the diffs')
      .option('--net', "the session's net change: its first captured workspace against its last"),
  ).action(async (id: string, options: DiffFlags) => (await import('./changes.action.js')).diffCommand(id, options));

  addCommonOptions(
    program
      .command('rewind')
      .description('go back to a seq: restore the workspace as it was then (--code) and/or fork the conversation there (--conversation); both when neither is given')
      .argument('<id>', 'session id')
      .requiredOption('--to <seq>', 'the seq to go back to (the workspace as it was once that record was durable)')
      .option('--code', 'restore the workspace')
      .option('--conversation', 'fork the conversation at the step holding the seq (prints the command that continues it; calls no model)')
      .option('--yes', 'do not ask before changing files')
      .option('--force', 'overwrite files changed outside rein since the session last recorded them'),
  ).action(async (id: string, options: RewindFlags) => (await import('./changes.action.js')).rewindCommand(id, options, setExit));

  addCommonOptions(
    program
      .command('compare')
      .description('two sessions side by side (a fork and its parent from the fork point, any two turn by turn): outcome, verifications, tokens, time, files changed, the first differing turn')
      .argument('<a>', 'a session id')
      .argument('<b>', 'another session id'),
  ).action(async (a: string, b: string, options: CommonOptions) => (await import('./changes.action.js')).compareCommand(a, b, options));
};
