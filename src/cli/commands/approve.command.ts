import type { Command } from 'commander';
import { addCommonOptions } from '../command-options.js';
import type { ApproveOptions } from './approve.flags.js';

/**
 * `rein approve <sessionId> <id> [--deny] [--reason <text>]`: answer what a queued session waits for — an approval (by
 * its approval id) or the rerun of an in-doubt call (by its effect id). The answer waits in the queue; the worker that
 * runs the session next applies it.
 */
export const registerApprove = (program: Command): void => {
  addCommonOptions(
    program
      .command('approve')
      .description('answer an approval, or confirm the rerun of an in-doubt call, that a queued session (rein run --detach) waits for; a worker applies it')
      .argument('<sessionId>', 'the session')
      .argument('<id>', 'the approval id, or the in-doubt effect id to rerun (the worker that parked the session prints them)')
      .option('--deny', 'deny the call instead of allowing it once (a confirmation: do not rerun it; the model is told its outcome is unknown)')
      .option('--reason <text>', 'why (for a denial: what to do instead; the model reads it)'),
  ).action(async (sessionId: string, approvalId: string, options: ApproveOptions) => (await import('./approve.action.js')).approveCommand(sessionId, approvalId, options));
};
