import type { Command } from 'commander';
import type { CommonOptions } from '../command-options.js';
import type { CopyOptions } from './store.flags.js';

/**
 * `rein store migrate`: create or migrate a PostgreSQL store's schema (opening a store does it too). `rein store
 * copy --from --to`: copy sessions between stores.
 */
export const registerStore = (program: Command): void => {
  const store = program.command('store').description('manage event stores');
  store
    .command('migrate')
    .description("create or migrate a PostgreSQL store's schema (versioned, idempotent)")
    .option('--store <url>', 'the PostgreSQL store (env REIN_STORE)')
    .option('--json', 'print the report as JSON')
    .action(async (options: CommonOptions) => (await import('./store.action.js')).migrateCommand(options));
  store
    .command('copy')
    .description('copy every session (records and blobs) from one store to another, verifying each by replay')
    .requiredOption('--from <dir|url>', 'the source store: a directory or a postgres:// URL')
    .requiredOption('--to <dir|url>', 'the destination store: a directory or a postgres:// URL')
    .option('--adopt', "also copy logs whose chain is intact but not this machine's (another machine's, or written before the chain): the destination vouches for them under this machine's key")
    .option('--json', 'print one JSON line per copied stream')
    .action(async (options: CopyOptions) => (await import('./store.action.js')).copyCommand(options));
};

