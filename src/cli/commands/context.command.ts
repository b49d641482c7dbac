import type { Command } from 'commander';
import { addCommonOptions } from '../command-options.js';
import type { ContextOptions } from './context.flags.js';

/** `rein context <id> [--turn N]`: exactly what the model saw at a turn, and the decision ledger behind it (read-only). */
export const registerContext = (program: Command): void => {
  const command = program
    .command('context')
    .description('show exactly what the model saw at a turn and why (read-only)')
    .argument('<id>', 'session id')
    .option('--turn <n>', 'the model turn (default: the last)')
    .option('--actor <path>', 'the actor (default: root)')
    .option('--attempt <n>', 'the attempt within the turn (default: the last)');
  addCommonOptions(command).action(async (id: string, options: ContextOptions) => (await import('./context.action.js')).contextCommand(id, options));
};
