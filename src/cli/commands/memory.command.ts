import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';
import { scopeLevels } from './memory.flags.js';

const action = () => import('./memory.action.js');

/** `rein memory list | show | review | approve | reject | revoke | health`: the human side of memory governance. */
export const registerMemory = (program: Command): void => {
  const memory = program.command('memory').description('review, approve, reject and revoke governed long-term memory, and check its health');

  addCommonOptions(memory.command('list').description('list the store records (active ones unless --all)').option('--all', 'include deprecated, revoked and expired records')).action(async (options: CommonOptions & { all?: boolean }) =>
    (await action()).listCommand(options),
  );

  addCommonOptions(memory.command('show').description('one record or candidate, with its audit trail').argument('<id>', 'record or candidate id')).action(async (id: string, options: CommonOptions) => (await action()).showCommand(id, options));

  addCommonOptions(memory.command('review').description('candidates waiting for a person or for more evidence')).action(async (options: CommonOptions) => (await action()).reviewCommand(options));

  addCommonOptions(
    memory
      .command('approve')
      .description('approve a candidate and promote it into the store (its source turns must have reached MutationReady)')
      .argument('<candidateId>', 'candidate id')
      .option('--content <text>', 'store a narrower, more accurate statement instead')
      .option('--scope <level>', `store it at this scope (${scopeLevels.join(', ')})`),
  ).action(async (candidateId: string, options: CommonOptions & { content?: string; scope?: string }) => (await action()).approveCommand(candidateId, options));

  addCommonOptions(memory.command('reject').description('reject a candidate for good').argument('<candidateId>', 'candidate id').requiredOption('--reason <text>', 'why (kept in the audit trail)')).action(
    async (candidateId: string, options: CommonOptions & { reason: string }) => (await action()).rejectCommand(candidateId, options),
  );

  addCommonOptions(memory.command('revoke').description('revoke a store record ("forget that"); it stays, revoked, for audit').argument('<recordId>', 'record id').requiredOption('--reason <text>', 'why (kept in the audit trail)')).action(
    async (recordId: string, options: CommonOptions & { reason: string }) => (await action()).revokeCommand(recordId, options),
  );

  addCommonOptions(memory.command('health').description('expired, due for review, too broad, sourceless and conflicting active records')).action(async (options: CommonOptions) => (await action()).healthCommand(options));
};
