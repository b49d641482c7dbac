import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { demoServer, gatedProvider, startHttpMcpServer, type HttpMcpServer } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

const token = `tok-${randomUUID()}`;

const settledOf = (records: readonly RecordEnvelope[], name: string) => flattenRecords(records).filter((record) => record.type === 'tool.settled' && (record.data as { name: string }).name === name).map((record) => record.data as { status: string; errorCode?: string; observation: string });

describe('MCP servers over Streamable HTTP (the server SDK on 127.0.0.1)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let good: HttpMcpServer;
  let broken: HttpMcpServer;
  let records: RecordEnvelope[] = [];
  let status = '';

  beforeAll(async () => {
    workspace = await makeTempDir();
    good = await startHttpMcpServer(() => demoServer({ slowMs: 3_000 }));
    broken = await startHttpMcpServer(() => demoServer(), { mode: 'error500' });
    process.env.REIN_TEST_DEMO_TOKEN = token;
    const script = {
      turns: [
        {
          text: 'Calling over HTTP.',
          toolCalls: [
            { name: 'mcp__demo__add', arguments: { a: 20, b: 22 } },
            { name: 'mcp__demo__fail', arguments: {} },
            { name: 'mcp__slowpoke__slow', arguments: {} },
            { name: 'mcp__broken__add', arguments: { a: 1, b: 2 } },
          ],
        },
        { text: 'Done.' },
      ],
    };
    const store = createMemoryEventStore();
    try {
      const rein = await createRein({
        store,
        workspace: workspace.path,
        provider: createScriptedProvider(parseScript(script)),
        skills: false,
        mcpServers: {
          demo: { type: 'http', url: good.url, headers: { Authorization: 'Bearer ${REIN_TEST_DEMO_TOKEN}', 'X-Plain': 'plain' } },
          // The same endpoint, with calls that may take at most 500 ms: its slow tool (3 s) times out.
          slowpoke: { type: 'http', url: good.url, timeout: 500 },
          broken: { type: 'http', url: broken.url },
          unset: { type: 'http', url: good.url, headers: { Authorization: 'Bearer ${REIN_TEST_NOT_SET}' } },
        },
      });
      const session = await rein.startSession({ task: 'use the http servers' });
      status = (await session.whenQuiet()).status;
      records = await store.read(session.id);
    } finally {
      delete process.env.REIN_TEST_DEMO_TOKEN;
    }
  }, 60_000);

  afterAll(async () => {
    await good.close();
    await broken.close();
    await workspace.remove();
  });

  it('sends headers with ${VAR} expanded, and records only the header and variable names', () => {
    expect(good.headers.some((headers) => headers.authorization === `Bearer ${token}` && headers['x-plain'] === 'plain')).toBe(true);
    const started = flattenRecords(records).find((record) => record.type === 'mcp.started' && (record.data as { server: string }).server === 'demo')!.data;
    expect(started).toMatchObject({ transport: 'http', url: good.url, headers: ['Authorization', 'X-Plain'], env: ['REIN_TEST_DEMO_TOKEN'] });
    expect(JSON.stringify(records)).not.toContain(token);
  });

  it('calls tools over HTTP: a result with structured content, an isError result, a call that times out', () => {
    expect(settledOf(records, 'mcp__demo__add')[0]).toMatchObject({ status: 'ok', observation: '42\nstructured content: {"sum":42}' });
    expect(settledOf(records, 'mcp__demo__fail')[0]).toMatchObject({ status: 'error', errorCode: 'ExecutionFailed', observation: 'ExecutionFailed: the backend said no' });
    expect(settledOf(records, 'mcp__slowpoke__slow')[0]).toMatchObject({ status: 'error', errorCode: 'Timeout' });
  });

  it('a server answering 500, and one whose variable is unset, fail to connect — recorded, and the session goes on', () => {
    const failed = flattenRecords(records).filter((record) => record.type === 'mcp.failed').map((record) => record.data as { server: string; phase: string; error: string });
    expect(failed).toEqual(expect.arrayContaining([expect.objectContaining({ server: 'broken', phase: 'connect' }), expect.objectContaining({ server: 'unset', phase: 'connect', error: expect.stringContaining('REIN_TEST_NOT_SET is not set') })]));
    expect(settledOf(records, 'mcp__broken__add')[0]).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    // The unknown call blocked its turn; the final answer after it completes the session with the finding recorded.
    expect(status).toBe('completed');
    const ended = flattenRecords(records).find((record) => record.type === 'session.ended')!.data as { unresolved?: { findings: { class: string }[] } };
    expect(ended.unresolved?.findings.map((finding) => finding.class)).toContain('tool.unknown_or_disallowed');
    expect(verifyRecords('s', records).verified).toBeGreaterThan(0);
  });
});

describe('an HTTP server that goes away mid-session', () => {
  it('its call is Unavailable; rein reconnects with backoff, records each attempt, fails after the last, and drops its tools', async () => {
    const workspace = await makeTempDir();
    const server = await startHttpMcpServer(() => demoServer());
    const store = createMemoryEventStore();
    let sessionId = '';
    const has = async (type: string) => (await store.read(sessionId)).some((record) => record.type === type);
    const provider = gatedProvider(
      {
        turns: [
          { text: 'First.', toolCalls: [{ name: 'mcp__demo__add', arguments: { a: 1, b: 1 } }] },
          { text: 'Again.', toolCalls: [{ name: 'mcp__demo__add', arguments: { a: 2, b: 2 } }] },
          { text: 'Without it.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
          { text: 'Done.' },
        ],
      },
      {
        2: () => server.close(),
        3: async () => {
          for (let tries = 0; tries < 400 && !(await has('mcp.failed')); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
        },
      },
    );
    try {
      const rein = await createRein({ store, workspace: workspace.path, provider, skills: false, mcpServers: { demo: { type: 'http', url: server.url } } });
      const session = await rein.createSession({ task: 'outlive the server' });
      sessionId = session.id;
      await session.send('outlive the server');
      expect((await session.whenQuiet()).status).toBe('completed');
      const records = await store.read(session.id);
      expect(settledOf(records, 'mcp__demo__add').map((result) => result.errorCode ?? result.status)).toEqual(['ok', 'Unavailable']);
      const attempts = flattenRecords(records).filter((record) => record.type === 'mcp.reconnecting').map((record) => (record.data as { attempt: number }).attempt);
      expect(attempts).toEqual([1, 2, 3]);
      expect(flattenRecords(records).find((record) => record.type === 'mcp.failed')!.data).toMatchObject({ phase: 'connection' });
      const transitions = flattenRecords(records).filter((record) => record.type === 'actor.transitioned' && record.actor === 'root/mcp/demo').map((record) => (record.data as { to: string }).to);
      expect(transitions).toEqual(['connecting', 'ready', 'reconnecting', 'reconnecting', 'reconnecting', 'failed']);
      const removal = flattenRecords(records).filter((record) => record.type === 'capability.diff').map((record) => record.data as { removed: Array<{ name: string; reason: string }> }).find((diff) => diff.removed.length > 0);
      expect(removal?.removed).toEqual(expect.arrayContaining([{ name: 'mcp__demo__add', reason: 'server-unavailable' }]));
      expect(verifyRecords(session.id, records).verified).toBeGreaterThan(0);
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});

describe('an HTTP server nobody listens on (issue 30 E)', () => {
  it('fails to connect naming the cause — ECONNREFUSED host:port — not only "fetch failed"', async () => {
    const workspace = await makeTempDir();
    // A port that was free a moment ago and is closed now: nothing listens on it.
    const gone = await startHttpMcpServer(() => demoServer());
    const url = gone.url;
    const port = new URL(url).port;
    await gone.close();
    const store = createMemoryEventStore();
    try {
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] })), skills: false, mcpServers: { away: { type: 'http', url } } });
      const session = await rein.startSession({ task: 'reach nobody' });
      await session.whenQuiet();
      const failed = (await store.read(session.id)).find((record) => record.type === 'mcp.failed')!.data as { error: string };
      expect(failed.error).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
