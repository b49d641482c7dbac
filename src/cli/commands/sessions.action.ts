import { ReinError } from '../../host/host-errors.js';
import { sessionPages } from '../../session/session-catalog.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { transcriptLine } from '../transcript.js';
import type { EventStore } from '../../../stores/event-store.js';

/** Open the workspace's store for one command and close it afterwards. */
export const withStore = async <T>(options: CommonOptions, mode: 'read' | 'write' | 'read-only', work: (store: EventStore) => Promise<T>): Promise<T> => {
  const store = await openStore(options, await workspaceOf(options), mode);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
};

/** The body of `rein sessions`: page by page, so a large store streams its lines (`--json`: one object per line). */
export const sessionsCommand = (options: CommonOptions & { status?: string }): Promise<void> =>
  withStore(options, 'read', async (store) => {
    let printed = 0;
    for await (const page of sessionPages(store, options.status === undefined ? {} : { status: options.status })) {
      for (const session of page) {
        printed++;
        if (options.json) printJson(session);
        else if (session.damaged) process.stdout.write(`${session.id}  damaged: ${session.damaged.code} ${session.damaged.message}\n`);
        else {
          const fork = session.forkedFrom ? ` (fork of ${session.forkedFrom.stream}@${session.forkedFrom.seq})` : '';
          process.stdout.write(`${session.id}  ${session.status.padEnd(16)} ${String(session.head).padStart(6)} records  ${session.task.slice(0, 60)}${fork}\n`);
        }
      }
    }
    if (printed === 0 && !options.json) process.stdout.write('no sessions\n');
  });

/** The body of `rein show`. */
export const showCommand = (id: string, options: CommonOptions & { verbose?: boolean }): Promise<void> =>
  withStore(options, 'read', async (store) => {
    const records = await store.read(id);
    if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
    for (const record of records) {
      if (options.json) printJson(record);
      else {
        const line = transcriptLine(record, { verbose: Boolean(options.verbose) });
        if (line) process.stdout.write(`${line}\n`);
      }
    }
  });
