import type { Command } from 'commander';
import { addCommonOptions } from '../command-options.js';
import type { VerifyOptions } from './verify.flags.js';

/**
 * `rein verify <id>`: check a session's chain (every record, inputs included, against this machine's key) without
 * replaying it — exit 0 only when it is intact and authenticated, 4 when broken, 5 when intact but not authenticated.
 */
export const registerVerify = (program: Command): void => {
  addCommonOptions(
    program
      .command('verify')
      .description("check that a session's log is the one rein wrote: every record chained and authenticated by this machine's key (no replay)")
      .argument('[id]', 'session id (or any stream of the store)')
      .option('--all', 'check every stream of the store'),
  ).action(async (id: string | undefined, options: VerifyOptions) => (await import('./verify.action.js')).verifyCommand(id, options));
};
