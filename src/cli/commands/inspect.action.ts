import { inspectRecords } from '../../inspect/inspect-session.js';
import { startInspectorRelay } from '../../inspect/inspector-relay.js';
import { connectInspector } from '../../inspect/stately-inspector.js';
import { readSession } from '../../session/session-records.js';
import { openStore, printJson, workspaceOf } from '../cli-context.js';
import { defaultInspectorUrl, type InspectOptions } from './inspect.flags.js';
import { wholeNumberFlag } from '../whole-number-flag.js';
import { ReinError } from '../../host/host-errors.js';

/** `rein inspect --serve` without a session: the relay and its page, until Ctrl-C, for `rein run --inspect <ws-url>`. */
const serveOnly = async (port: number, json: boolean): Promise<void> => {
  const relay = await startInspectorRelay({ port });
  const run = `rein run "<task>" --inspect${relay.wsUrl === defaultInspectorUrl ? '' : ` ${relay.wsUrl}`}`;
  if (json) printJson({ url: relay.wsUrl, page: relay.pageUrl });
  else process.stdout.write(`inspector relay on ${relay.wsUrl}: open ${relay.pageUrl} in a browser (the page loads the inspector UI from stately.ai), then stream a live session to it with ${run}; Ctrl-C to stop\n`);
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await relay.close();
};

const servePort = (value: string | boolean | undefined): number | undefined => {
  if (value === undefined || value === false) return undefined;
  if (value === true) return 8080;
  return wholeNumberFlag(value, { min: 0, max: 65_535, message: '--serve takes a port number from 0 to 65535' });
};

/** The body of `rein inspect` (see `registerInspect`). */
export const inspectCommand = async (id: string | undefined, options: InspectOptions): Promise<void> => {
  const port = servePort(options.serve);
  if (id === undefined) {
    if (port === undefined) throw new ReinError('USAGE', 'rein inspect needs a session id, or --serve to start a relay that rein run --inspect streams a live session to');
    return serveOnly(port, Boolean(options.json));
  }
  const store = await openStore(options, await workspaceOf(options), 'read-only');
  let records;
  try {
    records = await readSession(store, id);
  } finally {
    await store.close();
  }
  const relay = port === undefined ? undefined : await startInspectorRelay({ port });
  const connection = await connectInspector(relay?.wsUrl ?? options.url ?? defaultInspectorUrl);
  try {
    const result = inspectRecords(id, records, connection.inspect);
    await connection.flush();
    const summary = { sessionId: id, url: connection.url, records: result.verified, events: connection.sent(), ...(relay ? { page: relay.pageUrl } : {}) };
    if (options.json) printJson(summary);
    else process.stdout.write(`streamed ${summary.events} inspection events (${result.verified} records replayed) to ${connection.url}\n`);
  } finally {
    await connection.close();
  }
  if (relay) {
    if (!options.json) process.stdout.write(`open ${relay.pageUrl} in a browser to see the session in the Stately inspector (the page loads the inspector UI from stately.ai); Ctrl-C to stop\n`);
    await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    await relay.close();
  }
};
