import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { LiveEvent } from '../../models/live-events.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { verifyRecords } from '../../src/host/replay.js';
import { everythingServer, gatedProvider, pidsWithMarker } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

const secret = `sk-test-${randomUUID()}`;
const marker = randomUUID();

const settledOf = (records: readonly RecordEnvelope[], name: string) => flattenRecords(records).filter((record) => record.type === 'tool.settled' && (record.data as { name: string }).name === name).map((record) => record.data as { status: string; errorCode?: string; observation: string; artifacts?: string[] });

describe('an MCP server over stdio (@modelcontextprotocol/server-everything)', () => {
  let records: RecordEnvelope[] = [];
  const live: LiveEvent[] = [];
  let status = '';
  let workspace: { path: string; remove: () => Promise<void> };

  beforeAll(async () => {
    workspace = await makeTempDir();
    const previous = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = secret;
    const script = {
      turns: [
        {
          text: 'Trying the server.',
          toolCalls: [
            { name: 'mcp__everything__echo', arguments: { message: 'hello' } },
            { name: 'mcp__everything__get-sum', arguments: { a: 2, b: 3 } },
            { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
            { name: 'mcp__everything__get-annotated-message', arguments: { messageType: 'success', includeImage: true } },
            { name: 'mcp__everything__get-structured-content', arguments: { location: 'Chicago' } },
            { name: 'mcp__everything__get-env', arguments: {} },
            { name: 'list_mcp_resources', arguments: {} },
            { name: 'read_mcp_resource', arguments: { server: 'everything', uri: 'demo://resource/static/document/features.md' } },
          ],
        },
        { text: 'Once more, after the server died.', toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'again' } }] },
        { text: 'The server is gone; carrying on without it.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
        { text: 'Done.' },
      ],
    };
    // Before the second model call the server is killed, and the test waits until rein has recorded that.
    const store = createMemoryEventStore();
    const provider = gatedProvider(script, {
      2: async () => {
        for (const pid of await pidsWithMarker(marker)) process.kill(pid, 'SIGKILL');
        for (let tries = 0; tries < 200 && !(await store.read(sessionId)).some((record) => record.type === 'mcp.failed'); tries++) await new Promise((resolve) => setTimeout(resolve, 25));
      },
    });
    let sessionId = '';
    try {
      const rein = await createRein({ store, workspace: workspace.path, provider, skills: false, mcpServers: { everything: everythingServer(marker) } });
      const session = await rein.createSession({ task: 'use the everything server' });
      sessionId = session.id;
      session.live$.subscribe((event) => live.push(event));
      await session.send('use the everything server');
      status = (await session.whenQuiet()).status;
      records = await store.read(session.id);
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  }, 120_000);

  afterAll(async () => {
    await workspace.remove();
  });

  it('records the server starting and its tools, mapped to mcp__everything__*, before the first model call', () => {
    const types = records.map((record) => record.type);
    expect(types.indexOf('mcp.started')).toBeLessThan(types.indexOf('mcp.connected'));
    expect(types.indexOf('mcp.connected')).toBeLessThan(types.indexOf('user.message'));
    const connected = flattenRecords(records).find((record) => record.type === 'mcp.connected')!.data as { tools: Array<{ name: string; tool: string; readOnly: boolean }>; resources: boolean };
    expect(connected.resources).toBe(true);
    expect(connected.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-env']));
    expect(connected.tools.find((tool) => tool.tool === 'echo')).toMatchObject({ name: 'mcp__everything__echo', readOnly: true });
    const firstDiff = flattenRecords(records).find((record) => record.type === 'capability.diff')!.data as { added: Array<{ name: string }> };
    expect(firstDiff.added.map((entry) => entry.name)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'list_mcp_resources', 'read_mcp_resource']));
  });

  it('runs the calls through the pipeline: validation, permission, start, result', () => {
    const echo = flattenRecords(records).filter((record) => record.corr === flattenRecords(records).find((entry) => entry.type === 'tool.settled' && (entry.data as { name: string }).name === 'mcp__everything__echo')?.corr);
    expect(echo.map((record) => record.type)).toEqual(expect.arrayContaining(['effect.requested', 'tool.validated', 'permission.decided', 'tool.started', 'tool.settled']));
    expect((echo.find((record) => record.type === 'tool.started')!.data as { intent: unknown }).intent).toEqual({ server: 'everything', tool: 'echo', openWorld: false });
    expect(settledOf(records, 'mcp__everything__echo')[0]).toMatchObject({ status: 'ok', observation: 'Echo: hello' });
    expect(settledOf(records, 'mcp__everything__get-sum')[0]!.observation).toContain('5');
  });

  it('shows progress of the long-running tool live, and its result', () => {
    expect(settledOf(records, 'mcp__everything__trigger-long-running-operation')[0]).toMatchObject({ status: 'ok' });
    expect(live.some((event) => event.type === 'effect.progress' && /^1\/2/.test(event.message))).toBe(true);
  });

  it('turns an image into an artifact, structured content into JSON, and reads resources', () => {
    const annotated = settledOf(records, 'mcp__everything__get-annotated-message')[0]!;
    expect(annotated.observation).toMatch(/\[image image\/png, \d+ bytes: artifact:\/\/blake3\/[0-9a-f]{64}\]/);
    expect(annotated.artifacts?.length).toBe(1);
    const structured = settledOf(records, 'mcp__everything__get-structured-content')[0]!;
    expect(structured.observation).toMatch(/temperature/);
    const listed = JSON.parse(settledOf(records, 'list_mcp_resources')[0]!.observation) as Array<{ server: string; uri: string }>;
    expect(listed.some((resource) => resource.uri === 'demo://resource/static/document/features.md')).toBe(true);
    expect(settledOf(records, 'read_mcp_resource')[0]).toMatchObject({ status: 'ok' });
  });

  it('gives a stdio server the SDK default environment and its own env, never a provider key', () => {
    const environment = settledOf(records, 'mcp__everything__get-env')[0]!.observation;
    expect(environment).toContain('REIN_TEST_MARKER');
    expect(environment).not.toContain(secret);
    expect(environment).not.toContain('OPENAI_API_KEY');
    expect(JSON.stringify(records)).not.toContain(secret);
  });

  it('a killed server: its call is Unavailable, the next round drops its tools with a diff, and the session goes on', () => {
    expect(flattenRecords(records).find((record) => record.type === 'mcp.failed')!.data).toMatchObject({ server: 'everything', phase: 'connection' });
    expect(settledOf(records, 'mcp__everything__echo')[1]).toMatchObject({ status: 'error', errorCode: 'Unavailable' });
    const removal = flattenRecords(records).filter((record) => record.type === 'capability.diff').map((record) => record.data as { removed: Array<{ name: string; reason: string }> }).find((diff) => diff.removed.length > 0)!;
    expect(removal.removed).toEqual(expect.arrayContaining([{ name: 'mcp__everything__echo', reason: 'server-unavailable' }]));
    expect(status).toBe('completed');
  });

  it('replays from the log alone: no server running, none configured', () => {
    expect(verifyRecords('s', records).verified).toBeGreaterThan(0);
  });
});
