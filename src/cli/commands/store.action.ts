import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ReinError } from '../../host/host-errors.js';
import { isPostgresUrl } from '../../../stores/postgres/postgres-url.js';
import { openStoreAt, printJson, storeLocationOf, type CommonOptions } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { CopyOptions } from './store.flags.js';

/** The body of `rein store migrate` (see `registerStore`). */
export const migrateCommand = async (options: CommonOptions): Promise<void> => {
  const location = await storeLocationOf(options, process.cwd());
  if (!isPostgresUrl(location)) throw new ReinError('USAGE', 'rein store migrate needs a PostgreSQL store: --store postgres://… (or REIN_STORE)');
  const { openPostgresEventStore } = await import('../../../stores/postgres/postgres-event-store.js');
  const opened = await openPostgresEventStore(location, { applicationName: 'rein-cli' });
  try {
    const report = opened.migration!;
    if (options.json) printJson({ store: opened.location, ...report });
    else printText(`${opened.location}: schema ${report.schema} at version ${report.to}${report.applied.length > 0 ? ` (applied ${report.applied.join(', ')})` : ' (up to date)'}\n`);
  } finally {
    await opened.close();
  }
};

/**
 * The body of `rein store copy` (see `registerStore`): every stream is attempted; each one that could not be copied
 * is printed with its error code, and the command then fails with `STORE_COPY_INCOMPLETE` (exit 1). A source
 * directory that does not exist is `STORE_NOT_FOUND`.
 */
export const copyCommand = async (options: CopyOptions): Promise<void> => {
  const { copyStore } = await import('../../session/copy-store.js');
  if (!isPostgresUrl(options.from)) {
    const found = await stat(resolve(options.from)).catch(() => undefined);
    if (!found?.isDirectory()) throw new ReinError('STORE_NOT_FOUND', `no store at ${resolve(options.from)}: the source of a copy must exist`);
  }
  // The source is only read, and never opened in place: a damaged stream in it stays as it is (LevelDB's recovery
  // runs on a throwaway copy) and is reported failed with STORE_CORRUPT_RECORD.
  const from = await openStoreAt(options.from, { mode: 'read-only' });
  try {
    const to = await openStoreAt(options.to, { mode: 'write' });
    try {
      const copied = await copyStore(from, to, {
        adopt: options.adopt === true,
        onStream: (stream) => {
          if (options.json) printJson(stream);
          else if (stream.error) printText(`failed ${stream.stream}: ${stream.error.code} ${stream.error.message}\n`);
          else printText(`${stream.outcome} ${stream.stream}: ${stream.records} records${stream.outcome === 'extended' ? ` (${stream.appended} appended)` : ''}, ${stream.blobs} blobs${stream.verified === undefined ? '' : `, replay verified ${stream.verified}`}\n`);
        },
      });
      const failed = copied.filter((stream) => stream.outcome === 'failed');
      if (!options.json) printText(`${copied.length} streams${failed.length > 0 ? `, ${failed.length} not copied` : ''}\n`);
      if (failed.length > 0) {
        throw new ReinError('STORE_COPY_INCOMPLETE', `${failed.length} of ${copied.length} streams were not copied: ${failed.map((stream) => `${stream.stream} (${stream.error!.code})`).join(', ')}`);
      }
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
};
