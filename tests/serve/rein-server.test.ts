import { request as httpRequest } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { builtinTools, createMemoryEventStore, createRein, createScriptedProvider, parseScript, readSse, type SessionSummary, type TraceOutcome } from '../../src/index.js';
import { editTool } from '../../src/tools/edit.tool.js';
import type { AnyToolDefinition, ToolContext } from '../../src/tools/tool.js';
import { ReinRecordSchema, type ReinRecord } from '../../models/records.js';
import { ActionResult, ActorStates, CompareBody, ContextBody, ErrorBody, MachineList, MemoryBody, RecordPage, ReplayBody, SessionDetail, SessionList, Timeline, TraceBody } from '../../src/serve/api-schemas.js';
import { listenReinServer, type ListeningReinServer } from '../../src/serve/rein-server.js';
import { pathPattern } from '../../src/serve/route-kit.js';
import { startViewerFixture, type ViewerFixture } from '../support/viewer-fixture.js';
import { makeTempDir } from '../support/temp-dir.js';

/** Every route a test called, as `METHOD /openapi/path`: the last test checks that none was left out. */
const hit = new Set<string>();

const client = (listening: () => ListeningReinServer, token: string) => {
  const note = (method: string, path: string) => {
    const pathname = new URL(path, 'http://x').pathname;
    const route = listening().server.routes.find((candidate) => candidate.method === method && pathPattern(candidate.path).test(pathname));
    if (route) hit.add(`${method} ${route.path}`);
  };
  const call = async <S extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: S, body?: unknown, status?: number): Promise<z.infer<S>> => {
    note(method, path);
    const response = await fetch(`${listening().origin}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}) });
    const json = (await response.json()) as unknown;
    if (status !== undefined) expect({ status: response.status, json }).toMatchObject({ status });
    else if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return schema.parse(json);
  };
  return {
    get: <S extends z.ZodType>(path: string, schema: S, status?: number) => call('GET', path, schema, undefined, status),
    post: <S extends z.ZodType>(path: string, schema: S, body?: unknown, status?: number) => call('POST', path, schema, body, status),
    raw: async (path: string, init: RequestInit = {}) => {
      note(init.method ?? 'GET', path);
      return fetch(`${listening().origin}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) } });
    },
  };
};

/** A raw request (fetch cannot set Host). */
const rawRequest = (port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });

describe('rein serve’s HTTP API', () => {
  let fixture: ViewerFixture;
  let api: ReturnType<typeof client>;
  let done: string;

  beforeAll(async () => {
    fixture = await startViewerFixture();
    api = client(() => fixture.listening, fixture.token);
    done = await fixture.runToEnd();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('lists sessions with the trace outcome, filters by status and searches by text', async () => {
    const { sessions } = await api.get('/api/sessions', SessionList);
    const row = sessions.find((session) => session.id === done)!;
    const summary: SessionSummary = row;
    expect(summary.status).toBe('completed');
    const outcome: TraceOutcome | undefined = row.outcome;
    expect(outcome).toBe('succeeded');
    expect(row).toMatchObject({ turns: 6, toolCalls: 6, runningHere: false });
    expect(row.tokens.input + row.tokens.output).toBeGreaterThan(0);
    expect((await api.get('/api/sessions?status=failed', SessionList)).sessions).toEqual([]);
    expect((await api.get('/api/sessions?q=FAILING', SessionList)).sessions.map((session) => session.id)).toContain(done);
    expect((await api.get('/api/sessions?q=nothing-like-this', SessionList)).sessions).toEqual([]);
    const detail = await api.get(`/api/sessions/${done}`, SessionDetail);
    expect(detail).toMatchObject({ id: done, approvals: [], confirmations: [], forks: [], actions: true });
    expect((await api.get('/api/sessions/no-such-session', ErrorBody, 404)).error.code).toBe('SESSION_NOT_FOUND');
  });

  it('reads records by range, typed by the library’s record union', async () => {
    const page = await api.get(`/api/sessions/${done}/records?from=2&to=6`, RecordPage);
    expect(page.records.map((record) => record.seq)).toEqual([2, 3, 4, 5, 6]);
    const stored = (await fixture.writer.read(done, { from: 2, to: 6 })) as ReinRecord[];
    expect(page.records).toEqual(stored.map((record) => ReinRecordSchema.parse(record)));
    expect((await api.get(`/api/sessions/${done}/records?from=0`, ErrorBody, 400)).error.code).toBe('SERVE_BAD_REQUEST');
  });

  it('streams records as server-sent events from an offset, and resumes after Last-Event-ID with no gap and no duplicate', async () => {
    const head = await fixture.writer.head(done);
    const read = async (init: RequestInit & { path: string }, count: number) => {
      const controller = new AbortController();
      const response = await api.raw(init.path, { ...init, signal: controller.signal });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events: Array<{ id?: string; record: ReinRecord }> = [];
      for await (const event of readSse(response.body!)) {
        if (event.event !== 'record') continue;
        events.push({ ...(event.id === undefined ? {} : { id: event.id }), record: ReinRecordSchema.parse(JSON.parse(event.data)) as ReinRecord });
        if (events.length === count) break;
      }
      controller.abort();
      return events;
    };
    const fromTen = await read({ path: `/api/sessions/${done}/events?from=10` }, head - 9);
    expect(fromTen.map((event) => event.record.seq)).toEqual(Array.from({ length: head - 9 }, (_, index) => 10 + index));
    expect(fromTen.every((event) => event.id === String(event.record.seq))).toBe(true);
    // Resumed from the middle of the session (a step is a few records: the session is short).
    const middle = Math.floor(head / 2);
    expect(middle).toBeGreaterThan(10);
    const resumed = await read({ path: `/api/sessions/${done}/events?from=1`, headers: { 'last-event-id': String(middle) } }, head - middle);
    expect(resumed[0]!.record.seq).toBe(middle + 1);
    expect(resumed.at(-1)!.record.seq).toBe(head);
  });

  it('serves the views: timeline, trace report, context at a turn, actor states, memory, a blob, machines', async () => {
    const timeline = await api.get(`/api/sessions/${done}/timeline`, Timeline);
    expect(timeline.head).toBe(await fixture.writer.head(done));
    expect(timeline.steps.filter((step) => step.kind === 'turn').map((step) => step.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(timeline.steps.at(-1)).toMatchObject({ kind: 'end', status: 'ok' });
    const window = await api.get(`/api/sessions/${done}/timeline?offset=2&limit=3`, Timeline);
    expect(window.steps).toEqual(timeline.steps.slice(2, 5));
    const trace = await api.get(`/api/sessions/${done}/trace`, TraceBody);
    expect(trace).toMatchObject({ outcome: 'succeeded', claimedSuccess: true, turns: 6 });
    const context = await api.get(`/api/sessions/${done}/context?turn=2`, ContextBody);
    expect(context).toMatchObject({ actor: 'root', turn: 2, reconstructed: false, previous: { turn: 1 } });
    expect(context.ledger.included?.length).toBeGreaterThan(0);
    const blob = await api.raw(`/api/sessions/${done}/blob?ref=${encodeURIComponent(String(context.ledger.input))}`);
    expect(JSON.parse(await blob.text())).toEqual(context.input);
    expect((await api.get(`/api/sessions/${done}/context?turn=99`, ErrorBody, 404)).error.code).toBe('TURN_NOT_FOUND');
    const states = await api.get(`/api/sessions/${done}/states?seq=${timeline.steps[3]!.to}`, ActorStates);
    expect(states.actors.root).toBeDefined();
    expect(await api.get(`/api/sessions/${done}/memory`, MemoryBody)).toEqual({ candidates: [], records: [], orphans: 0 });
    const machines = await api.get('/api/machines', MachineList);
    expect(machines.machines.map((machine) => machine.machine)).toEqual(['session', 'turn']);
    const exported = await api.raw(`/api/sessions/${done}/export`);
    expect(exported.headers.get('content-disposition')).toContain(`${done}.html`);
    expect(await exported.text()).toContain('window.__REIN_EXPORT__');
  });

  it('takes the actions through the harness: start, approve, send, interrupt, resume, cancel, fork, replay, compare', async () => {
    const started = await api.post('/api/sessions', ActionResult, { task: 'fix the failing test over HTTP' }, 201);
    const id = started.sessionId;
    // It runs on in the server's process until it needs a person.
    await fixture.rein.session(id)?.whenQuiet();
    const waiting = await api.get(`/api/sessions/${id}`, SessionDetail);
    expect(waiting).toMatchObject({ status: 'awaiting-approval', runningHere: true });
    const [approval] = waiting.approvals;
    expect(approval).toMatchObject({ tool: 'bash', arguments: { command: 'node --test' } });
    expect((await api.post(`/api/sessions/${id}/approvals/${encodeURIComponent(approval!.approvalId)}`, ErrorBody, { decision: 'maybe' }, 400)).error.code).toBe('SERVE_BAD_REQUEST');
    await api.post(`/api/sessions/${id}/interrupt`, ActionResult, {});
    expect((await api.get(`/api/sessions/${id}`, SessionDetail)).status).toBe('interrupted');
    expect((await api.post(`/api/sessions/${id}/interrupt`, ErrorBody, {}, 409)).error.code).toBe('SERVE_NOT_RUNNING');
    expect((await api.post(`/api/sessions/${id}/resume`, ActionResult, {}, 202)).status).toBe('paused');
    await fixture.rein.session(id)?.whenQuiet();
    const resumed = await api.get(`/api/sessions/${id}`, SessionDetail);
    expect(resumed.status).toBe('awaiting-approval');
    // A message while it waits is taken (it reaches the model with the next turn).
    expect(await api.post(`/api/sessions/${id}/messages`, ActionResult, { text: 'and keep the change small' }, 202)).toMatchObject({ sessionId: id });
    await api.post(`/api/sessions/${id}/approvals/${encodeURIComponent(resumed.approvals[0]!.approvalId)}`, ActionResult, { decision: 'deny', feedback: 'not now' }, 202);
    const session = fixture.rein.session(id);
    if (session) await session.whenQuiet();
    const replied = (await fixture.writer.read(id)).filter((record) => record.type === 'approval.replied');
    expect(replied.at(-1)?.data).toMatchObject({ decision: 'deny', feedback: 'not now' });
    const cancelled = await api.post(`/api/sessions/${id}/cancel`, ActionResult, { reason: 'enough' });
    expect(cancelled.status).toBe('cancelled');
    expect((await api.post(`/api/sessions/${id}/messages`, ErrorBody, { text: 'more' }, 409)).error.code).toBe('SERVE_NOT_RUNNING');

    const timeline = await api.get(`/api/sessions/${done}/timeline`, Timeline);
    const at = timeline.steps.find((step) => step.kind === 'turn' && step.turn === 4)!.forkAt!;
    const forked = await api.post(`/api/sessions/${done}/fork`, ActionResult, { at }, 201);
    expect(await fixture.writer.info(forked.sessionId)).toMatchObject({ forkedFrom: { stream: done, seq: at } });
    expect((await api.post(`/api/sessions/${done}/fork`, ErrorBody, { at: at + 1 }, 400)).error.code).toBe('FORK_NOT_AT_BOUNDARY');
    expect((await api.get(`/api/sessions/${done}`, SessionDetail)).forks).toContain(forked.sessionId);
    const compared = await api.get(`/api/compare?a=${done}&b=${forked.sessionId}`, CompareBody);
    expect(compared).toMatchObject({ alignment: 'fork', forkSeq: at, a: { outcome: 'succeeded', filesChanged: ['src/stats.js'] }, b: { filesChanged: [] } });
    expect(compared.firstDifference?.turn).toBe(4);
    const replayed = await api.post(`/api/sessions/${done}/replay`, ReplayBody, {}, 200);
    expect(replayed).toMatchObject({ verified: true, records: await fixture.writer.head(done) });
  });

  it('answers the page and the OpenAPI 3.1 document generated from the schemas, naming every route', async () => {
    const document = (await (await api.raw('/openapi.json')).json()) as { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };
    expect(document.openapi).toBe('3.1.0');
    for (const route of fixture.listening.server.routes) expect(document.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['SessionRow', 'RecordPage', 'Timeline', 'TraceReport', 'ErrorBody']));
    expect(JSON.stringify(document.paths['/api/sessions/{id}/events'])).toContain('Last-Event-ID');
    const landing = await fetch(`${fixture.listening.origin}/?token=${fixture.token}`, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe('/');
    const cookie = landing.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await fetch(`${fixture.listening.origin}/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('/assets/app.js');
  });

  it('refuses a request without the token (401), from another origin or through a non-loopback Host (403)', async () => {
    const origin = fixture.listening.origin;
    const without = await fetch(`${origin}/api/sessions`);
    expect(without.status).toBe(401);
    expect(ErrorBody.parse(await without.json()).error.code).toBe('SERVE_UNAUTHORIZED');
    expect((await fetch(`${origin}/?token=wrong`)).status).toBe(401);
    expect((await fetch(`${origin}/api/sessions`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const foreign = await fetch(`${origin}/api/sessions`, { method: 'POST', headers: { authorization: `Bearer ${fixture.token}`, origin: 'http://evil.example', 'content-type': 'application/json' }, body: JSON.stringify({ task: 'x' }) });
    expect(foreign.status).toBe(403);
    expect(ErrorBody.parse(await foreign.json()).error.code).toBe('SERVE_FORBIDDEN');
    const form = await fetch(`${origin}/api/sessions`, { method: 'POST', headers: { authorization: `Bearer ${fixture.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'task=x' });
    expect(form.status).toBe(403);
    const rebound = await rawRequest(fixture.listening.port, '/api/sessions', { host: `evil.example:${fixture.listening.port}`, authorization: `Bearer ${fixture.token}` });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'SERVE_FORBIDDEN' } });
    expect((await rawRequest(fixture.listening.port, '/api/sessions', { host: `localhost:${fixture.listening.port}`, authorization: `Bearer ${fixture.token}` })).status).toBe(200);
    expect((await api.raw('/api/nothing-here')).status).toBe(404);
    expect((await api.raw('/api/machines', { method: 'POST', headers: { 'content-type': 'application/json' } })).status).toBe(405);
  });

  it('a read-only server reads everything and takes no action', async () => {
    const readOnly = await listenReinServer({ store: fixture.reader, token: 'read-only-token' });
    try {
      const ro = client(() => readOnly, 'read-only-token');
      const listed = await ro.get('/api/sessions', SessionList);
      expect(listed.sessions.length).toBeGreaterThan(0);
      expect(listed.actions).toBe(false);
      expect((await ro.post('/api/sessions', ErrorBody, { task: 'x' }, 403)).error.code).toBe('SERVE_READ_ONLY');
    } finally {
      await readOnly.close();
    }
  });

  it('confirms (or declines) the rerun of an in-doubt effect', async () => {
    const directory = await makeTempDir('rein-serve-confirm-');
    const file = join(directory.path, 'a.txt');
    await writeFile(file, 'alpha\n');
    const store = createMemoryEventStore();
    const script = parseScript({ turns: [{ toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { toolCalls: [{ name: 'edit', arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' } }] }, { text: 'Done.' }] });
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const heldEdit: AnyToolDefinition = {
      ...editTool,
      execute: (_args: never, context: ToolContext) =>
        new Promise<never>((_, reject) => {
          context.signal.addEventListener('abort', () => reject(new Error('interrupted')), { once: true });
          held();
        }),
    };
    const crashing = await createRein({ store, workspace: directory.path, provider: createScriptedProvider(script), permissions: { mode: 'accept-edits' }, tools: builtinTools().map((tool) => (tool.name === 'edit' ? heldEdit : tool)), memory: false });
    const session = await crashing.createSession({ task: 'edit' });
    const started = firstValueFrom(session.records$.pipe(filter((record) => record.type === 'tool.started')));
    await session.send('edit');
    await started;
    await holding;
    await session.interrupt('simulated crash');
    await writeFile(file, 'someone else wrote this\n');
    const rein = await createRein({ store, workspace: directory.path, provider: createScriptedProvider(script), permissions: { mode: 'accept-edits' }, memory: false });
    const listening = await listenReinServer({ rein, token: 'confirm-token' });
    try {
      const confirm = client(() => listening, 'confirm-token');
      await confirm.post(`/api/sessions/${session.id}/resume`, ActionResult, {}, 202);
      const detail = await confirm.get(`/api/sessions/${session.id}`, SessionDetail);
      expect(detail.status).toBe('awaiting-confirmation');
      const [{ effectId }] = detail.confirmations as [{ effectId: string }];
      expect((await confirm.post(`/api/sessions/${session.id}/confirmations/${encodeURIComponent(effectId)}`, ActionResult, { decision: 'decline' }, 202)).sessionId).toBe(session.id);
      await rein.session(session.id)?.whenQuiet();
      const records = await store.read(session.id);
      expect(records.some((record) => record.type === 'effect.resolved' && (record.data as { effectId?: string }).effectId === effectId)).toBe(true);
      expect(await readFile(file, 'utf8')).toBe('someone else wrote this\n');
    } finally {
      await listening.close();
      await rein.close();
      await directory.remove();
    }
  });

  it('every route of the API was called by these tests', () => {
    expect(fixture.listening.server.routes.map((route) => `${route.method} ${route.path}`).filter((route) => !hit.has(route))).toEqual([]);
  });
});
