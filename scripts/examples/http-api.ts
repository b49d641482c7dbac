import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Subscription } from 'rxjs';
import { loopbackRequestProblem, sessionEndedIn, type Rein } from '../../src/index.js';

/** What a route handler gets: the request, the response, the path parameters and the parsed URL. */
interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  params: Record<string, string>;
  url: URL;
}

interface Route {
  method: string;
  pattern: RegExp;
  handle(context: RouteContext): Promise<void>;
}

/** An error the API answers with `status` and `{ error: { code, message } }`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const route = (method: string, path: string, handle: Route['handle']): Route => ({
  method,
  pattern: new RegExp(`^${path.replace(/:(\w+)/g, '(?<$1>[^/]+)')}$`),
  handle,
});

const sendJson = (response: ServerResponse, status: number, value: unknown): void => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(`${JSON.stringify(value)}\n`);
};

const readJson = async (request: IncomingMessage): Promise<Record<string, unknown>> => {
  let text = '';
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > 1_000_000) throw new HttpError(413, 'BODY_TOO_LARGE', 'the request body is over 1 MB');
  }
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new HttpError(400, 'BAD_JSON', 'the request body must be a JSON object');
};

const requireSession = async (rein: Rein, id: string) => {
  const summary = await rein.getSession(id);
  if (!summary) throw new HttpError(404, 'SESSION_NOT_FOUND', `no session ${id}`);
  return summary;
};

const running = (rein: Rein, id: string) => {
  const session = rein.session(id);
  if (!session) throw new HttpError(409, 'SESSION_NOT_RUNNING', `session ${id} is not running in this process`);
  return session;
};

/**
 * Stream a session's records as server-sent events (`id: <seq>`, `event: record`): history from `?from=` (or after
 * `Last-Event-ID`, so a browser's EventSource reconnects without gaps), then live appends, until the session ends
 * or the client leaves. `?live=1` adds the ephemeral progress events (`event: live`) of a session running here.
 */
const streamRecords = (rein: Rein) => async ({ request, response, params, url }: RouteContext): Promise<void> => {
  const id = params.id!;
  await requireSession(rein, id);
  const lastEventId = Number(request.headers['last-event-id']);
  const from = Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId + 1 : Math.max(1, Number(url.searchParams.get('from') ?? 1) || 1);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
  const subscriptions: Subscription[] = [];
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), 15_000);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(keepAlive);
    for (const subscription of subscriptions) subscription.unsubscribe();
    response.end();
  };
  response.on('close', stop);
  const session = url.searchParams.get('live') === '1' ? rein.session(id) : undefined;
  if (session) subscriptions.push(session.live$.subscribe((event) => response.write(`event: live\ndata: ${JSON.stringify(event)}\n\n`)));
  subscriptions.push(
    rein.records(id, from).subscribe((record) => {
      response.write(`id: ${record.seq}\nevent: record\ndata: ${JSON.stringify(record)}\n\n`);
      // The root's `session.ended` is an entry of the step record that ends the session.
      if (sessionEndedIn(record)) queueMicrotask(stop);
    }),
  );
};

const decisions = new Set(['allow-once', 'allow-session', 'deny']);

/**
 * The routes of the example API: start, list, inspect, stream, send, cancel, and answer approvals —
 * `GET /sessions/:id/approvals` lists the pending questions, `POST /sessions/:id/approvals/:approvalId`
 * `{ decision, feedback? }` answers one (the session continues; deny rules and the workspace boundary still hold).
 */
export const reinRoutes = (rein: Rein): Route[] => [
  route('POST', '/sessions', async ({ request, response }) => {
    const body = await readJson(request);
    if (typeof body.task !== 'string' || body.task.trim() === '') throw new HttpError(400, 'BAD_REQUEST', 'POST /sessions needs { "task": "…" }');
    const session = await rein.startSession({ task: body.task });
    session.whenQuiet().catch((error: unknown) => process.stderr.write(`session ${session.id} stopped: ${String(error)}\n`));
    sendJson(response, 201, { sessionId: session.id, records: `/sessions/${session.id}/records` });
  }),
  route('GET', '/sessions', async ({ response }) => sendJson(response, 200, await rein.listSessions())),
  route('GET', '/sessions/:id', async ({ response, params }) => {
    const summary = await requireSession(rein, params.id!);
    sendJson(response, 200, { ...summary, running: rein.session(params.id!) !== undefined });
  }),
  route('GET', '/sessions/:id/records', streamRecords(rein)),
  route('POST', '/sessions/:id/messages', async ({ request, response, params }) => {
    const body = await readJson(request);
    if (typeof body.text !== 'string') throw new HttpError(400, 'BAD_REQUEST', 'POST /sessions/:id/messages needs { "text": "…" }');
    await running(rein, params.id!).send(body.text);
    sendJson(response, 202, { accepted: true });
  }),
  route('GET', '/sessions/:id/approvals', async ({ response, params }) => sendJson(response, 200, running(rein, params.id!).pendingApprovals())),
  route('POST', '/sessions/:id/approvals/:approvalId', async ({ request, response, params }) => {
    const body = await readJson(request);
    if (typeof body.decision !== 'string' || !decisions.has(body.decision)) throw new HttpError(400, 'BAD_REQUEST', 'answer with { "decision": "allow-once" | "allow-session" | "deny", "feedback"?: "…" }');
    const session = running(rein, params.id!);
    await session.approve(params.approvalId!, { decision: body.decision as 'allow-once' | 'allow-session' | 'deny', ...(typeof body.feedback === 'string' ? { feedback: body.feedback } : {}) });
    session.whenQuiet().catch((error: unknown) => process.stderr.write(`session ${session.id} stopped: ${String(error)}\n`));
    sendJson(response, 202, { accepted: true });
  }),
  route('POST', '/sessions/:id/cancel', async ({ request, response, params }) => {
    const body = await readJson(request);
    await running(rein, params.id!).cancel(typeof body.reason === 'string' ? body.reason : 'cancelled over HTTP');
    sendJson(response, 202, { accepted: true });
  }),
];

/** A `node:http` request listener serving `routes`; errors become JSON answers with a stable code. */
export const createReinHttpHandler = (routes: readonly Route[]) => async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  try {
    // Loopback is no boundary for a browser: a page of any site can POST here (a "simple" request needs no preflight)
    // or reach it through a rebound DNS name. Only this server's own origin, or a client that is no browser, is served.
    const problem = loopbackRequestProblem(request.headers, request.socket.localPort ?? 0);
    if (problem) throw new HttpError(403, 'FORBIDDEN', problem);
    const candidates = routes.filter((candidate) => candidate.pattern.test(url.pathname));
    const match = candidates.find((candidate) => candidate.method === request.method);
    if (!match) throw candidates.length > 0 ? new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname}`) : new HttpError(404, 'NOT_FOUND', `no route ${url.pathname}`);
    // Path parameters arrive percent-encoded (approval ids are actor paths such as `root/approval-3`).
    const params = Object.fromEntries(Object.entries({ ...match.pattern.exec(url.pathname)?.groups }).map(([key, value]) => [key, decodeURIComponent(value ?? '')]));
    await match.handle({ request, response, params, url });
  } catch (error) {
    const errorCode = (error as { code?: string }).code;
    const status = error instanceof HttpError ? error.status : errorCode === 'SESSION_NOT_FOUND' || errorCode === 'APPROVAL_NOT_FOUND' ? 404 : errorCode === 'INPUT_INVALID' ? 400 : 500;
    const code = error instanceof HttpError ? error.code : String((error as { code?: unknown }).code ?? 'INTERNAL');
    if (response.headersSent) response.end();
    else sendJson(response, status, { error: { code, message: (error as Error).message } });
  }
};
