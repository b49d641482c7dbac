import { ReinError } from '../../host/host-errors.js';
import { isPostgresUrl } from '../../../stores/postgres/postgres-url.js';
import { openStoreAt, printJson, storeLocationOf, type CommonOptions } from '../cli-context.js';
import type { CopyOptions } from './store.command.js';

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

/** The body of `rein store copy` (see `registerStore`). */
export const copyCommand = async (options: CopyOptions): Promise<void> => {
  const { copyStore } = await import('../../session/copy-store.js');
  const from = await openStoreAt(options.from, { mode: 'read' });
  try {
    const to = await openStoreAt(options.to, { mode: 'write' });
    try {
      const copied = await copyStore(from, to, {
        onStream: (stream) => {
          if (options.json) printJson(stream);
          else process.stdout.write(`${stream.outcome} ${stream.stream}: ${stream.records} records, ${stream.blobs} blobs${stream.verified === undefined ? '' : `, replay verified ${stream.verified}`}\n`);
        },
      });
      if (!options.json) process.stdout.write(`${copied.length} streams\n`);
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
};
