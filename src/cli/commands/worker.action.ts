import { ReinError } from '../../host/host-errors.js';
import { isPostgresUrl } from '../../../stores/postgres/postgres-url.js';
import { printJson, storeLocationOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import { positiveFlag, wholeNumberFlag } from '../whole-number-flag.js';
import type { WorkerCommandOptions } from './worker.flags.js';

/** The shortest lease `rein worker --lease-ms` takes. */
const minimumLeaseMs = 1_000;

const positiveInteger = (flag: string, value: string | undefined, fallback: number): number => positiveFlag(flag, value) ?? fallback;

/** The body of `rein worker` (see `registerWorker`). */
export const workerCommand = async (options: WorkerCommandOptions): Promise<void> => {
  // A bad flag is a usage error before anything else is looked at.
  const concurrency = positiveInteger('--concurrency', options.concurrency, 1);
  // A lease is renewed every third of its length: much shorter than a second, a busy worker (a synced append, a slow
  // query) misses a renewal and loses the sessions it runs to another worker.
  const leaseMs = wholeNumberFlag(options.leaseMs, { min: minimumLeaseMs, message: `--lease-ms must be a whole number of milliseconds, at least ${minimumLeaseMs} (a lease is renewed every third of it)` }) ?? 15_000;
  const exitWhenIdleMs = options.exitWhenIdle === undefined ? undefined : positiveInteger('--exit-when-idle', options.exitWhenIdle, 1);
  const location = await storeLocationOf(options, process.cwd());
  if (!isPostgresUrl(location)) throw new ReinError('QUEUE_UNSUPPORTED', 'rein worker needs a PostgreSQL store: --store postgres://… (or REIN_STORE); only it queues sessions');
  const [{ openPostgresEventStore }, { runWorker }] = await Promise.all([import('../../../stores/postgres/postgres-event-store.js'), import('../../worker/worker.js')]);
  const store = await openPostgresEventStore(location, { applicationName: 'rein-worker', durability: options.relaxed ? 'relaxed' : 'sync', poolSize: Math.max(4, concurrency * 2 + 2) });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const report = await runWorker({
      store,
      concurrency,
      leaseMs,
      signal: stop.signal,
      ...(exitWhenIdleMs === undefined ? {} : { exitWhenIdleMs }),
      onEvent: (event) => {
        if (options.json) printJson(event);
        else printText(`${event.type} ${event.sessionId} (epoch ${event.epoch})${event.detail ? `: ${event.detail}` : ''}\n`);
      },
    });
    if (options.json) printJson({ type: 'stopped', ...report });
    else printText(`worker ${report.owner} stopped: ${report.claimed} claimed, ${report.finished} finished, ${report.parked} parked, ${report.fenced} fenced, ${report.failed} failed\n`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await store.close();
  }
};
