import { shareRedactor } from '../../trace/share-redaction.js';
import { secretsFromEnvironment } from '../environment-secrets.js';
import { ReinError } from '../../host/host-errors.js';
import { listSessions, sessionPages, sessionStatuses, type SessionSummary } from '../../session/session-catalog.js';
import { formatUsd, usageCost } from '../../projections/usage-summary.js';
import { sessionsPageOf, type SessionsCommandOptions } from './sessions.flags.js';
import { openStore, printJson, storeFlags, workspaceOf, type CommonOptions } from '../cli-context.js';
import { printText } from '../print-text.js';
import { costLine, sessionCost } from '../../projections/cost.js';
import { configuredPrices } from '../config-prices.js';
import { transcriptLine, transcriptSafe } from '../transcript.js';
import { terminalSafe, terminalText } from '../../util/terminal-text.js';
import type { EventStore } from '../../../stores/event-store.js';
import { flattenRecords } from '../../host/step-record.js';
import { resolveCallSpecs } from '../../../stores/call-spec-refs.js';

/** Open the workspace's store for one command and close it afterwards. */
export const withStore = async <T>(options: CommonOptions, mode: 'read' | 'write' | 'read-only', work: (store: EventStore) => Promise<T>): Promise<T> => {
  const store = await openStore(options, await workspaceOf(options), mode);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
};

/**
 * The body of `rein sessions`: page by page, so a large store streams its lines (`--json`: one object per line, with
 * `costUsd`, or `costUnpriced` when a model has no price). `--limit`/`--after` list one page and say how to get the next.
 */
export const sessionsCommand = async (options: SessionsCommandOptions): Promise<void> => {
  const page = sessionsPageOf(options);
  const status = page.status;
  // Read-only: every stream is read through a throwaway copy, so listing never lets LevelDB's recovery rewrite a
  // damaged stream in place (the store stays byte-identical, damaged or not).
  // The widest status (`awaiting-confirmation`) sets the column, so the counts line up on every row.
  const statusWidth = Math.max(...sessionStatuses.map((name) => name.length));
  const outcomeWidth = 'unverified'.length;
  // Priced now, at the configured prices: the listing carries tokens (facts), never money.
  const prices = await configuredPrices(await workspaceOf(options));
  return withStore(options, 'read-only', async (store) => {
    let printed = 0;
    let last: string | undefined;
    let more = false;
    const print = (session: SessionSummary) => {
      printed++;
      last = session.id;
      const cost = session.usage ? usageCost(session.usage, prices) : undefined;
      if (options.json) printJson({ ...session, ...(cost === undefined ? {} : 'usd' in cost ? { costUsd: cost.usd } : { costUnpriced: [cost.unpriced] }) });
      else if (session.damaged) printText(`${session.id}  damaged: ${session.damaged.code} ${oneLine(session.damaged.message)}\n`);
      else {
        const fork = session.forkedFrom ? ` (fork of ${session.forkedFrom.stream}@${session.forkedFrom.seq}${session.status === 'forked' ? `; continue it with rein resume ${session.id}${storeFlags(options)}` : ''})` : '';
        // A completed session's outcome says what its verifications showed (`failed`: the last one failed).
        const outcome = session.status === 'completed' && session.outcome ? session.outcome : '';
        const money = cost === undefined ? '' : 'usd' in cost ? formatUsd(cost.usd) : 'unknown';
        printText(`${session.id}  ${session.status.padEnd(statusWidth)} ${outcome.padEnd(outcomeWidth)} ${String(session.head).padStart(6)} records ${money.padStart(9)}  ${terminalText(session.task).slice(0, 60)}${fork}\n`);
      }
    };
    if (page.limit === undefined && page.after === undefined) {
      for await (const listed of sessionPages(store, status === undefined ? {} : { status })) for (const session of listed) print(session);
    } else {
      // One more than the page, to know whether a next page exists.
      const listed = await listSessions(store, { ...page, ...(page.limit === undefined ? {} : { limit: page.limit + 1 }) });
      more = page.limit !== undefined && listed.length > page.limit;
      for (const session of more ? listed.slice(0, page.limit) : listed) print(session);
    }
    if (more && last !== undefined) {
      const next = `next page: rein sessions${status === undefined ? '' : ` --status ${status}`} --limit ${page.limit} --after ${last}${options.json ? ' --json' : ''}\n`;
      if (options.json) process.stderr.write(next);
      else printText(next);
    }
    if (printed > 0 || options.json) return;
    if (page.after !== undefined) return void printText('no more sessions\n');
    if (status === undefined) return void printText('no sessions\n');
    // Say whether the store is empty or only nothing matched.
    const [any] = await firstPage(store);
    printText(any === undefined ? 'no sessions\n' : `no sessions with status ${status}\n`);
  });
};

/** A message on one line (LevelDB's recovery report quotes several lines of its info log): line breaks become ` · `. */
export const oneLine = (message: string): string => message.split(/\s*[\r\n]+\s*/).filter((part) => part !== '').join(' · ');

const firstPage = async (store: EventStore): Promise<SessionSummary[]> => {
  for await (const page of sessionPages(store)) if (page.length > 0) return page;
  return [];
};

/** The body of `rein show`. */
export const showCommand = (id: string, options: CommonOptions & { verbose?: boolean; raw?: boolean }): Promise<void> =>
  withStore(options, 'read-only', async (store) => {
    // CallSpecs stored by reference (`model.responded` v2) are shown whole.
    const stored = resolveCallSpecs(await store.read(id));
    if (stored.length === 0) return showQueued(store, id, Boolean(options.json));
    // A transcript is shared as often as a trace: the secrets the session met are removed unless --raw asks.
    const share = options.raw ? undefined : shareRedactor([stored.map((record) => record.data)], { secrets: secretsFromEnvironment(process.env) });
    const records = share ? stored.map((record) => ({ ...record, data: share.value(record.data) })) : stored;
    // `--json` prints the records as stored (step records whole, CallSpecs whole); the transcript reads what each stands for.
    for (const record of options.json ? records : flattenRecords(records)) {
      if (options.json) printJson(record);
      else {
        const line = transcriptLine(transcriptSafe(record), { verbose: Boolean(options.verbose) });
        if (line) printText(`${line}\n`);
      }
    }
    // The cost is derived from the log at show time (a projection), never stored; a session with no model call has none.
    if (!options.json && records.some((record) => record.type === 'model.responded')) printText(`${costLine(sessionCost(records, await configuredPrices(await workspaceOf(options))))}\n`);
  });

/**
 * A session with no record yet: one queued for a worker (PostgreSQL) is shown as queued (`--json`:
 * `{ sessionId, queued: true, state, task }`); anything else is `SESSION_NOT_FOUND`.
 */
const showQueued = async (store: EventStore, id: string, json: boolean): Promise<void> => {
  const queue = store.capabilities.fencing ? (await import('../../../stores/postgres/postgres-session-queue.js')).sessionQueueOf(store) : undefined;
  const entry = await queue?.entry(id);
  if (!entry || entry.state === 'done') throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
  const task = String((entry.spec as { task?: unknown }).task ?? '');
  if (json) return printJson({ sessionId: id, queued: true, state: entry.state, task });
  printText(`${id} is ${entry.state === 'queued' ? 'queued: no worker has started it yet' : 'starting on a worker'}; no records yet\ntask: ${task}\n`);
};
