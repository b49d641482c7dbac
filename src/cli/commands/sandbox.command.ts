import type { Command } from 'commander';
import { addSandboxOptions } from '../command-options.js';
import type { SandboxCommandOptions } from './sandbox.flags.js';

/** `rein sandbox [--json]`: the sandbox profile and the enforcement in effect here, found by the start-up probe. */
export const registerSandbox = (program: Command): void => {
  const command = program
    .command('sandbox')
    .description('show how bash would be isolated here: bubblewrap or the fallback (and why), the network policy, the protected paths and every bind')
    .option('--workspace <dir>', 'the workspace directory (default: the root of the git repository you are in, else the current directory)')
    .option('--store <dir>', 'the event store directory (default: <workspace>/.rein)')
    .option('--json', 'print one JSON object');
  addSandboxOptions(command).action(async (options: SandboxCommandOptions) => (await import('./sandbox.action.js')).sandboxCommand(options));
};
