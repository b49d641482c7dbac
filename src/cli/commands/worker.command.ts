import type { Command } from 'commander';
import type { WorkerCommandOptions } from './worker.flags.js';

/**
 * `rein worker --store postgres://… [--concurrency N]`: run queued sessions (`rein run --detach`) under leases until
 * SIGINT or SIGTERM, which interrupt the running sessions and hand them back to the queue.
 */
export const registerWorker = (program: Command): void => {
  program
    .command('worker')
    .description('run queued sessions from a PostgreSQL store, each under a lease fenced by its epoch')
    .option('--store <url>', 'the PostgreSQL store holding the queue (env REIN_STORE)')
    .option('--concurrency <n>', 'sessions run at once (default 1)')
    .option('--lease-ms <ms>', 'lease length: a session whose worker stopped renewing is taken over after this long (default 15000)')
    .option('--exit-when-idle <ms>', 'exit once nothing was runnable for this long')
    .option('--json', 'print one JSON line per worker event')
    .action(async (options: WorkerCommandOptions) => (await import('./worker.action.js')).workerCommand(options));
};
