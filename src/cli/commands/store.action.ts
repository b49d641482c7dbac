import { ReinError } from '../../host/host-errors.js';
import { isPostgresUrl } from '../../../stores/postgres/postgres-url.js';
import { printJson, storeLocationOf, type CommonOptions } from '../cli-context.js';

/** The body of `rein store migrate` (see `registerStore`). */
export const migrateCommand = async (options: CommonOptions): Promise<void> => {
  const location = await storeLocationOf(options, process.cwd());
  if (!isPostgresUrl(location)) throw new ReinError('USAGE', 'rein store migrate needs a PostgreSQL store: --store postgres://… (or REIN_STORE)');
  const { openPostgresEventStore } = await import('../../../stores/postgres/postgres-event-store.js');
  const opened = await openPostgresEventStore(location, { applicationName: 'rein-cli' });
  try {
    const report = opened.migration!;
    if (options.json) printJson({ store: opened.location, ...report });
    else process.stdout.write(`${opened.location}: schema ${report.schema} at version ${report.to}${report.applied.length > 0 ? ` (applied ${report.applied.join(', ')})` : ' (up to date)'}\n`);
  } finally {
    await opened.close();
  }
};
