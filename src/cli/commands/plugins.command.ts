import type { Command } from 'commander';
import { addPluginOptions, type CommonOptions, type PluginOptions } from '../command-options.js';

/**
 * `rein plugins list` / `rein plugins trust`, and every plugin's commands as `rein <plugin> <command> [args…]`
 * (a top-level name that is not a built-in command is looked up among the workspace's plugins).
 */
export const registerPlugins = (program: Command, setExit: (code: number) => void): void => {
  const plugins = program.command('plugins').description("list the workspace's plugins and hooks, or trust project plugins");
  addPluginOptions(
    plugins
      .command('list')
      .description('every plugin found (user, project, --plugin) with its state, source, contributions and why it failed; then the hooks in the order they run')
      .option('--workspace <dir>', 'the workspace directory (default: the root of the git repository you are in, else the current directory)')
      .option('--json', 'one JSON object per line'),
  ).action(async (options: CommonOptions & PluginOptions) => (await import('./plugins.action.js')).listPluginsCommand(options));

  plugins
    .command('trust')
    .description('trust the project plugins in .rein-plugins/ and rein.config.json (all, or those named) as they are now; recorded in your config home')
    .argument('[ids...]', 'plugin ids (default: every project plugin)')
    .option('--workspace <dir>', 'the workspace directory (default: the root of the git repository you are in, else the current directory)')
    .action(async (ids: string[], options: CommonOptions) => (await import('./plugins.action.js')).trustPluginsCommand(ids, options));

  program
    .argument('[plugin]')
    .argument('[command]')
    .argument('[args...]')
    .allowUnknownOption()
    .action(async (pluginId: string | undefined, name: string | undefined, args: string[]) => {
      if (!pluginId) return void program.outputHelp();
      await (await import('./plugins.action.js')).pluginCommand(pluginId, name, args, setExit);
    });
};
