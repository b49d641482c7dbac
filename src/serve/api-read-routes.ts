import { statusStateOf } from '../host/session-status.js';
import { compareSessions } from '../session/compare-sessions.js';
import { listSessions, summarizeSession } from '../session/session-catalog.js';
import { machineGraph } from '../cli/machine-graph.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { ReinError } from '../host/host-errors.js';
import {
  ActorStates,
  BlobQuery,
  CompareBody,
  CompareQuery,
  ContextBody,
  ContextQuery,
  EventsQuery,
  ListQuery,
  MachineList,
  MemoryBody,
  RecordPage,
  RecordsQuery,
  SessionDetail,
  SessionId,
  SessionList,
  StatesQuery,
  Timeline,
  TimelineQuery,
  TraceBody,
} from './api-schemas.js';
import { defineRoute, type Route } from './route-kit.js';
import { actorStatesAt, contextOfTurn, memoryOf } from './session-views.js';
import { streamEvents } from './session-events.js';
import { environmentSecrets, exportSessionHtml } from './export-html.js';
import { agentCosts, FOLD_BUDGET_MS, matches, needDigest, pendingApprovals, rowOf, streamsOf, type ApiContext } from './api-context.js';

/** The JSON API's reading routes (GET): sessions, their records, views, events, exports; the machines; comparisons. */
export const readRoutes = (context: ApiContext): Route[] => [
  defineRoute({
    method: 'GET',
    path: '/api/sessions',
    summary: 'List the sessions (oldest first) with status, trace outcome, task, turns, tokens, cost and times; filter by status, search id and task; page with limit and after',
    tag: 'sessions',
    query: ListQuery,
    answer: SessionList,
    changes: false,
    handle: async ({ query }) => {
      // One more than the page, to know whether there is a next one (`next`: its `after`).
      const listed = await listSessions(context.store, { ...(query.status ? { status: query.status } : {}), ...(query.after === undefined ? {} : { after: query.after }), ...(query.limit === undefined ? {} : { limit: query.limit + 1 }) });
      const more = query.limit !== undefined && listed.length > query.limit;
      const summaries = more ? listed.slice(0, query.limit) : listed;
      const rows = await Promise.all(
        summaries.map(async (summary) => {
          const found = summary.damaged ? undefined : await context.digests.current(summary.id, FOLD_BUDGET_MS).catch(() => undefined);
          return rowOf(summary, found?.digest, context.rein, found?.complete ?? true, context.digests.prices);
        }),
      );
      return { sessions: rows.filter((row) => matches(row, query.q ?? '')), ...(more ? { next: summaries[summaries.length - 1]!.id } : {}), actions: context.control !== undefined };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}',
    summary: 'One session: its row, the approvals and confirmations it waits for, and the sessions forked from it',
    tag: 'sessions',
    params: SessionId,
    answer: SessionDetail,
    changes: false,
    handle: async ({ params }) => {
      const summary = await summarizeSession(context.store, params.id);
      if (!summary) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      const found = await context.digests.current(params.id, FOLD_BUDGET_MS);
      if (!found) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      const { digest, complete } = found;
      const infos = await streamsOf(context);
      const waiting = summary.status === 'awaiting-confirmation' ? statusStateOf(await context.store.read(params.id, { reverse: true, limit: 64 }).then((records) => records.reverse())).waiting : [];
      return {
        ...rowOf(summary, digest, context.rein, complete, context.digests.prices),
        approvals: await pendingApprovals(context, params.id, summary.status),
        confirmations: waiting.map((effectId) => ({ effectId })),
        forks: infos.filter((info) => info.forkedFrom?.stream === params.id).map((info) => info.stream),
        agents: agentCosts(digest),
        actions: context.control !== undefined,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/records',
    summary: 'A range of the session’s records (from and to inclusive, at most limit, default 1000), typed by their type',
    tag: 'records',
    params: SessionId,
    query: RecordsQuery,
    answer: RecordPage,
    changes: false,
    handle: async ({ params, query }) => {
      const head = await context.store.head(params.id);
      if (head === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      const records = await context.store.read(params.id, { from: query.from ?? 1, ...(query.to ? { to: query.to } : {}), limit: query.limit ?? 1000 });
      return { head, records: records as RecordPage['records'] };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/events',
    summary: 'Server-sent events: the session’s records from `from` (inclusive; or after Last-Event-ID), history then live, each with its seq as the event id',
    tag: 'records',
    params: SessionId,
    query: EventsQuery,
    answer: { stream: 'text/event-stream', description: 'events `record` (data: one record as JSON, id: its seq) and `failure` (data: an ErrorBody), with `: keep-alive` comments' },
    changes: false,
    handle: async ({ params, query, request, response }) => streamEvents({ store: context.store, sessionId: params.id, from: query.from ?? 1, request, response, streams: context.streams }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/timeline',
    summary: 'The session’s timeline (turns, tool calls, approvals, children lanes, verifications, notes), a window of it by offset and limit',
    tag: 'views',
    params: SessionId,
    query: TimelineQuery,
    answer: Timeline,
    changes: false,
    handle: async ({ params, query }) => {
      const logHead = await context.store.head(params.id);
      const found = await context.digests.current(params.id, FOLD_BUDGET_MS);
      if (!found) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      const { digest, complete } = found;
      const { steps, stable, lanes } = context.digests.timeline(digest);
      const offset = Math.min(query.offset ?? 0, steps.length);
      return { head: digest.head, total: steps.length, stable, offset, steps: steps.slice(offset, offset + (query.limit ?? steps.length)), lanes, complete, logHead };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/trace',
    summary: 'The trace report: outcome, findings (primary first) and unknowns, as rein trace --json prints it',
    tag: 'views',
    params: SessionId,
    answer: TraceBody,
    changes: false,
    handle: async ({ params }) => {
      const analysed = await context.digests.report(params.id);
      if (!analysed) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      const { report } = analysed;
      return {
        sessionId: params.id,
        task: report.task,
        outcome: report.outcome,
        claimedSuccess: report.claimedSuccess,
        ...(report.ended ? { ended: report.ended } : {}),
        ...(report.finalMessage ? { finalMessage: report.finalMessage } : {}),
        findings: report.findings,
        ...(report.primary ? { primary: report.primary } : {}),
        turns: report.turns.length,
        unknowns: report.unknowns,
        evalCandidate: report.evalCandidate,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/context',
    summary: 'What the model saw at a turn (default: the actor’s last): each part with its tokens, what the policy dropped or summarised and why, the exact input, and the previous turn’s input',
    tag: 'views',
    params: SessionId,
    query: ContextQuery,
    answer: ContextBody,
    changes: false,
    handle: async ({ params, query }) => contextOfTurn(context.store, await needDigest(context, params.id), query),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/states',
    summary: 'The state of every actor as of a seq (the machine view’s highlight)',
    tag: 'views',
    params: SessionId,
    query: StatesQuery,
    answer: ActorStates,
    changes: false,
    handle: async ({ params, query }) => {
      if ((await context.store.head(params.id)) === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${params.id} in this store`);
      return actorStatesAt(context.store, params.id, query.seq);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/memory',
    summary: 'The session’s memory view: its candidate ledger and the records it promoted',
    tag: 'views',
    params: SessionId,
    answer: MemoryBody,
    changes: false,
    handle: async ({ params }) => memoryOf(context.store, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/blob',
    summary: 'The text of a blob the session references (an artifact:// ref: a full tool output, a model input)',
    tag: 'views',
    params: SessionId,
    query: BlobQuery,
    answer: { stream: 'text/plain', description: 'the blob’s bytes as UTF-8 text' },
    changes: false,
    handle: async ({ params, query, response }) => {
      const bytes = await context.store.readBlob(params.id, query.ref);
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': bytes.byteLength });
      response.end(bytes);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/{id}/export',
    summary: 'The session as one self-contained HTML file of the viewer (secrets redacted), as rein export --html writes it',
    tag: 'views',
    params: SessionId,
    answer: { stream: 'text/html', description: 'the HTML file, as an attachment' },
    changes: false,
    handle: async ({ params, response }) => {
      const html = await exportSessionHtml(context.store, params.id, { secrets: environmentSecrets(), prices: context.digests.prices, ...(context.assets ? { assets: context.assets } : {}) });
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-disposition': `attachment; filename="${params.id.replace(/[^A-Za-z0-9._-]/g, '_')}.html"`, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(html) });
      response.end(html);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/machines',
    summary: 'The statecharts of the session and of a turn’s typestate (as rein graph prints them)',
    tag: 'views',
    answer: MachineList,
    changes: false,
    handle: async () => ({ machines: [machineGraph('session', sessionMachine), machineGraph('turn', turnMachine)] }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/compare',
    summary: 'Compare two sessions: outcome, verifications, tokens, time, files changed and the first differing turn (a fork against its parent aligned at the fork point)',
    tag: 'views',
    query: CompareQuery,
    answer: CompareBody,
    changes: false,
    handle: async ({ query }) => compareSessions(context.store, query.a, query.b),
  }),
];
