import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';

/**
 * `rein mcp list | tools <server> | trust`: the workspace's MCP servers (from `rein.config.json` and `.mcp.json`),
 * whether each file is trusted, each trusted server's state and tools (by connecting to it briefly), and trusting a
 * file's current content.
 */
export const registerMcp = (program: Command): void => {
  const mcp = program.command('mcp').description('list the workspace\'s MCP servers and their tools, and trust its MCP configuration');
  addCommonOptions(mcp.command('list').description('every configured server: transport, state, tool count, last error (connects to trusted ones)')).action(async (options: CommonOptions) => (await import('./mcp.action.js')).mcpListCommand(options));
  addCommonOptions(mcp.command('tools').description('the tools of one server as the model would see them: rein name, annotations, description').argument('<server>', 'the server\'s name in the configuration')).action(async (server: string, options: CommonOptions) =>
    (await import('./mcp.action.js')).mcpToolsCommand(server, options),
  );
  addCommonOptions(mcp.command('trust').description('trust the MCP servers of rein.config.json and .mcp.json as they are now (recorded with each file\'s digest; a change asks again)')).action(async (options: CommonOptions) => (await import('./mcp.action.js')).mcpTrustCommand(options));
};
