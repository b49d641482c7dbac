import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/providers/sse-parser.js';
import { listSessions } from '../../src/session/session-catalog.js';
import { openLevelEventStore } from '../../stores/index.js';
import { modelExchange, shoutingModel } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { makeTempDir } from '../support/temp-dir.js';
import { sessionEndedIn } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

const example = fileURLToPath(new URL('../../dist/scripts/examples/http-server.js', import.meta.url));

/** Read a records stream to its end; returns the records and the SSE ids. */
const readRecords = async (url: string, headers: Record<string, string> = {}, onRecord?: (record: Record<string, any>) => Promise<void>) => {
  const response = await fetch(url, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const records: Array<Record<string, any>> = [];
  const ids: string[] = [];
  for await (const event of readSse(response.body as unknown as AsyncIterable<Uint8Array>)) {
    if (event.event !== 'record') continue;
    const record = JSON.parse(event.data) as Record<string, any>;
    records.push(record);
    ids.push(event.id ?? '');
    await onRecord?.(record);
  }
  return { records, ids };
};

/** A request as a browser would send it, with its own Host / Origin (fetch does not let a caller set them). */
const raw = (url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: options.method, headers: options.headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on('error', reject);
    sent.end(options.body);
  });

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe('the HTTP embedding example', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let model: LoopbackServer;
  let child: ChildProcess;
  let base: string;
  let hang = false;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-http-');
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const answer = modelExchange(shoutingModel('greeting.txt'));
    model = await startLoopbackServer((request) => (hang ? { chunks: answer(request).chunks.slice(0, 3), hang: true } : answer(request)));
    child = spawn(process.execPath, [example], {
      env: { ...process.env, REIN_WORKSPACE: workspace.path, REIN_PROVIDER: 'openai', REIN_MODEL: 'loopback-1', REIN_BASE_URL: `${model.url}/v1`, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    base = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) resolve(match[1]!);
      });
      child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
      child.on('exit', (code) => reject(new Error(`the example exited with ${code}: ${output}`)));
    });
  });

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await model.close();
    await workspace.remove();
  });

  let sessionId: string;

  it('starts a session over POST, streams its records as server-sent events, and takes the approval over HTTP', async () => {
    const created = await post(`${base}/sessions`, { task: 'shout greeting.txt' });
    expect(created.status).toBe(201);
    sessionId = created.body.sessionId;
    const answered: string[] = [];
    const { records, ids } = await readRecords(`${base}/sessions/${sessionId}/records`, {}, async (record) => {
      if (record.type !== 'approval.requested') return;
      const pending = (await fetch(`${base}/sessions/${sessionId}/approvals`).then((response) => response.json())) as Array<{ approvalId: string; tool: string }>;
      expect(pending).toEqual([expect.objectContaining({ approvalId: record.data.approvalId, tool: 'write' })]);
      expect((await post(`${base}/sessions/${sessionId}/approvals/${encodeURIComponent(record.data.approvalId)}`, { decision: 'maybe' })).body.error.code).toBe('BAD_REQUEST');
      expect((await post(`${base}/sessions/${sessionId}/approvals/approval-nope`, { decision: 'allow-once' })).status).toBe(404);
      expect((await post(`${base}/sessions/${sessionId}/approvals/${encodeURIComponent(record.data.approvalId)}`, { decision: 'allow-once' })).status).toBe(202);
      answered.push(record.data.approvalId);
    });
    expect(answered).toHaveLength(1);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    expect(ids).toEqual(records.map((record) => String(record.seq)));
    expect(records[0]).toMatchObject({ type: 'session.created', data: { provider: { name: 'openai', model: 'loopback-1' } } });
    expect(records.find((record) => record.type === 'approval.replied')).toMatchObject({ data: { approvalId: answered[0], decision: 'allow-once' } });
    expect(sessionEndedIn(records.at(-1) as RecordEnvelope)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
    expect(records.filter((record) => record.type === 'tool.settled').map((record) => record.data.name)).toEqual(['read', 'write', 'read']);
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
  });

  it('resumes a stream after Last-Event-ID, lists sessions, and answers errors with codes', async () => {
    const { records } = await readRecords(`${base}/sessions/${sessionId}/records`, { 'last-event-id': '5' });
    expect(records[0]!.seq).toBe(6);
    const summary = await fetch(`${base}/sessions/${sessionId}`).then((response) => response.json());
    expect(summary).toMatchObject({ id: sessionId, status: 'completed', running: false });
    const list = (await fetch(`${base}/sessions`).then((response) => response.json())) as Array<{ id: string }>;
    expect(list.map((entry) => entry.id)).toContain(sessionId);
    expect((await fetch(`${base}/sessions/s-nope/records`)).status).toBe(404);
    expect((await post(`${base}/sessions`, { nothing: true })).body.error.code).toBe('BAD_REQUEST');
    expect((await post(`${base}/sessions/${sessionId}/messages`, { text: 'more' })).status).toBe(409);
    expect((await fetch(`${base}/sessions`, { method: 'DELETE' })).status).toBe(405);
  });

  it('a page of another site (or a rebound DNS name) can neither start a session nor answer an approval: 403', async () => {
    const port = new URL(base).port;
    const before = ((await fetch(`${base}/sessions`).then((response) => response.json())) as unknown[]).length;
    // A "simple" cross-site POST: no preflight, so a browser sends it as is from any page.
    const crossSite = await raw(`${base}/sessions`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'https://evil.example' }, body: JSON.stringify({ task: 'shout greeting.txt' }) });
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.body)).toMatchObject({ error: { code: 'FORBIDDEN' } });
    const rebound = await raw(`${base}/sessions`, { method: 'POST', headers: { 'content-type': 'text/plain', host: `evil.example:${port}` }, body: JSON.stringify({ task: 'shout greeting.txt' }) });
    expect(rebound.status).toBe(403);
    const approval = await raw(`${base}/sessions/${sessionId}/approvals/root%2Fapproval-2`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'https://evil.example' }, body: '{"decision":"allow-once"}' });
    expect(approval.status).toBe(403);
    expect(((await fetch(`${base}/sessions`).then((response) => response.json())) as unknown[]).length).toBe(before);
    // Its own origin is served.
    expect((await raw(`${base}/sessions`, { method: 'GET', headers: { origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
  });

  it('cancels a running session over HTTP; the stream ends with the cancellation', async () => {
    hang = true;
    const created = await post(`${base}/sessions`, { task: 'shout greeting.txt' });
    const streamed = readRecords(`${base}/sessions/${created.body.sessionId}/records?live=1`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await post(`${base}/sessions/${created.body.sessionId}/cancel`, { reason: 'stop' })).status).toBe(202);
    const { records } = await streamed;
    expect(sessionEndedIn(records.at(-1) as RecordEnvelope)).toMatchObject({ type: 'session.ended', data: { status: 'cancelled', reason: 'stop' } });
    hang = false;
  });

  it('shuts down cleanly on SIGINT', async () => {
    hang = true;
    await post(`${base}/sessions`, { task: 'shout greeting.txt' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      expect((await listSessions(store)).map((summary) => summary.status).sort()).toEqual(['cancelled', 'completed', 'interrupted']);
    } finally {
      await store.close();
    }
  });
});
