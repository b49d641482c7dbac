import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';

export interface ApproveOptions extends CommonOptions {
  deny?: boolean;
  reason?: string;
}

/**
 * `rein approve <sessionId> <approvalId> [--deny] [--reason <text>]`: answer an approval a queued session waits for.
 * The answer waits in the queue; the worker that runs the session next applies it as the session's next step.
 */
export const registerApprove = (program: Command): void => {
  addCommonOptions(
    program
      .command('approve')
      .description('answer an approval a queued session (rein run --detach) waits for; a worker applies it')
      .argument('<sessionId>', 'the session')
      .argument('<approvalId>', 'the approval request (rein show <sessionId>, or the worker that parked it)')
      .option('--deny', 'deny the call instead of allowing it once')
      .option('--reason <text>', 'why (for a denial: what to do instead; the model reads it)'),
  ).action(async (sessionId: string, approvalId: string, options: ApproveOptions) => (await import('./approve.action.js')).approveCommand(sessionId, approvalId, options));
};
