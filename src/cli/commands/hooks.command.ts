import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';

/**
 * `rein hooks trust`: trust the command hooks of the workspace's `rein.config.json` as they are now (recorded in the
 * user's trust store with the digest of the `hooks` section; a change asks again). Until then `rein run`, `rein
 * resume` and `rein worker` do not load them.
 */
export const registerHooks = (program: Command): void => {
  const hooks = program.command('hooks').description('trust the command hooks of rein.config.json');
  addCommonOptions(hooks.command('trust').description('trust the command hooks of rein.config.json as they are now (recorded with the digest of its hooks section; a change asks again)')).action(async (options: CommonOptions) =>
    (await import('./hooks.action.js')).hooksTrustCommand(options),
  );
};
