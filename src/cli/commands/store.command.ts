import type { Command } from 'commander';
import type { CommonOptions } from '../command-options.js';

/** `rein store migrate`: create or migrate a PostgreSQL store's schema (opening a store does it too). */
export const registerStore = (program: Command): void => {
  const store = program.command('store').description('manage event stores');
  store
    .command('migrate')
    .description("create or migrate a PostgreSQL store's schema (versioned, idempotent)")
    .option('--store <url>', 'the PostgreSQL store (env REIN_STORE)')
    .option('--json', 'print the report as JSON')
    .action(async (options: CommonOptions) => (await import('./store.action.js')).migrateCommand(options));
};
