import type { Command } from 'commander';
import { addCommonOptions, addPermissionOptions, addPluginOptions, type CommonOptions, type PermissionOptions, type PluginOptions } from '../command-options.js';
import type { SessionsCommandOptions } from './sessions.flags.js';

/** `rein sessions`, `rein show`, `rein replay`, `rein fork`: commands that read (or fork) recorded sessions. */
export const registerReadCommands = (program: Command): void => {
  addCommonOptions(
    program
      .command('sessions')
      .description('list the sessions in the store')
      .option('--status <status>', 'only sessions in this status: completed, failed, cancelled, budget-exhausted, forked, interrupted, awaiting-budget, awaiting-approval, awaiting-confirmation, idle, active, queued, damaged')
      .option('--limit <n>', 'list a page of at most n sessions (1 to 10000) and say how to get the next')
      .option('--after <id>', 'start after this session (the last id of the previous page)'),
  ).action(async (options: SessionsCommandOptions) => (await import('./sessions.action.js')).sessionsCommand(options));

  addCommonOptions(
    program
      .command('show')
      .description('print a session transcript: messages, tool calls and results, approvals, child agents (every record with --json)')
      .argument('<id>', 'session id')
      .option('--verbose', "also show the turn typestate's witness records")
      .option('--raw', 'show the secrets the session met as they were recorded (redacted by default)'),
  ).action(async (id: string, options: CommonOptions & { verbose?: boolean; raw?: boolean }) => (await import('./sessions.action.js')).showCommand(id, options));

  addPluginOptions(
    addPermissionOptions(
      addCommonOptions(
        program
          .command('replay')
          .description('verify a session by replaying its log (runs no tools and no model)')
          .argument('<id>', 'session id')
          .option('--dry-run', "re-evaluate every recorded tool call under today's tools, policy and in-process plugin hooks (the permission flags say which); execute nothing")
          .option('--yes', 'with --dry-run: evaluate the policy as `rein run --yes` would (every ask answered allow); pass the flags the session ran with to compare like with like'),
      ),
    ),
  ).action(async (id: string, options: CommonOptions & PermissionOptions & PluginOptions & { dryRun?: boolean }) => (await import('./replay.action.js')).replayCommand(id, options));

  addCommonOptions(program.command('fork').description('fork a session at a seq into a new session').argument('<id>', 'session id').requiredOption('--at <seq>', 'the last seq the fork keeps')).action(
    async (id: string, options: CommonOptions & { at: string }) => (await import('./replay.action.js')).forkCommand(id, options),
  );
};
