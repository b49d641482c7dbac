import type { Command } from 'commander';
import { addBudgetOptions, addCapabilityOptions, addPermissionOptions, addPluginOptions, addProviderOptions } from '../command-options.js';
import type { AcpCommandOptions } from './acp.flags.js';

/**
 * `rein acp`: rein as an Agent Client Protocol agent on stdin/stdout, for editors (Zed, JetBrains). Every session the
 * editor starts runs in the folder it names (`cwd`) and is a normal rein session there.
 */
export const registerAcp = (program: Command): void => {
  const command = program
    .command('acp')
    .description('speak the Agent Client Protocol (v1) on stdin/stdout: an editor (Zed, JetBrains) runs, approves, cancels and reloads rein sessions')
    .option('--store <dir|url>', 'the event store of every session: a directory or a postgres:// URL (env REIN_STORE; default: <cwd of the session>/.rein)')
    .option('--relaxed', 'relaxed durability: group-commit fsyncs instead of one per step')
    .option('--no-memory', "run without the workspace's long-term memory")
    .option('--yes', "trust the workspaces' MCP configuration, project plugins and hooks without asking the editor");
  addCapabilityOptions(addPluginOptions(addPermissionOptions(addBudgetOptions(addProviderOptions(command, 'scripted provider: play this JSON script in every session'))))).action(async (options: AcpCommandOptions) =>
    (await import('./acp.action.js')).acpCommand(options),
  );
};
