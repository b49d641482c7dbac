import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRein } from '../../src/rein.js';
import { createOtlpExporter } from '../../src/telemetry/telemetry.js';
import { spansOfRecords } from '../../src/projections/spans.view.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';
import { testProvider } from './telemetry-support.js';

const replies = {
  root: [{ text: 'Reading.', calls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Listing.', calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Done.' }],
};

describe('OTLP/HTTP export to a collector on 127.0.0.1', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let receiver: OtlpReceiver | undefined;

  beforeEach(async () => {
    workspace = await makeTempDir();
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await workspace.remove();
  });

  const run = async (options: { protocol: 'http/json' | 'http/protobuf'; timeoutMs?: number; gate?: (actor: string, turn: number) => Promise<void> }) => {
    const store = createMemoryEventStore();
    const exporter = await createOtlpExporter({ endpoint: receiver!.url, protocol: options.protocol, useEnvironment: false, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
    const rein = await createRein({ store, workspace: workspace.path, provider: testProvider(replies, options.gate), memory: false, telemetry: { exporter } });
    const session = await rein.startSession({ task: 'read and list' });
    const result = await session.whenQuiet();
    return { rein, store, session, result };
  };

  it('posts OTLP/JSON to <base>/v1/traces: the body parses and holds every span, ids in hex', async () => {
    receiver = await startOtlpReceiver();
    const { rein, store, session, result } = await run({ protocol: 'http/json' });
    expect(result.status).toBe('completed');
    const stats = await rein.telemetry!.shutdown(5_000);
    expect(stats).toMatchObject({ ended: 6, exported: 6, dropped: 0 });
    expect(receiver.requests.every((request) => request.path === '/v1/traces' && String(request.headers['content-type']).startsWith('application/json'))).toBe(true);
    const body = receiver.requests[0]!.json;
    expect(body.resourceSpans[0].resource.attributes).toEqual(expect.arrayContaining([{ key: 'service.name', value: { stringValue: 'rein' } }]));
    expect(body.resourceSpans[0].scopeSpans[0].scope).toMatchObject({ name: 'rein' });
    const received = receiver.spans();
    for (const span of received) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    const fromLog = spansOfRecords(await store.read(session.id));
    expect(received.map((span) => `${span.spanId} ${span.name}`).sort()).toEqual(fromLog.map((span) => `${span.spanId} ${span.name}`).sort());
    expect(received.map((span) => span.name).sort()).toEqual(['chat test-model', 'chat test-model', 'chat test-model', 'execute_tool list_dir', 'execute_tool read', 'invoke_agent rein']);
  });

  it('posts OTLP/protobuf by default, with the same trace and span ids', async () => {
    receiver = await startOtlpReceiver();
    const { rein, store, session } = await run({ protocol: 'http/protobuf' });
    await rein.telemetry!.shutdown(5_000);
    expect(receiver.requests.every((request) => request.headers['content-type'] === 'application/x-protobuf')).toBe(true);
    const fromLog = spansOfRecords(await store.read(session.id));
    const key = (span: { traceId: string; spanId: string; parentSpanId?: string; name: string }) => `${span.traceId} ${span.spanId} ${span.parentSpanId ?? ''} ${span.name}`;
    expect(receiver.spans().map(key).sort()).toEqual(fromLog.map(key).sort());
  });

  it("sends a tool's span before the session ends", async () => {
    receiver = await startOtlpReceiver();
    const collector = receiver;
    // The model's second turn waits until the collector holds the first tool call's span: it could never answer
    // if rein held spans back until the end.
    const gate = async (_actor: string, turn: number) => {
      if (turn === 2) await collector.waitFor((span) => span.name === 'execute_tool read');
    };
    const { rein, result } = await run({ protocol: 'http/json', gate });
    expect(result.status).toBe('completed');
    await rein.telemetry!.shutdown(5_000);
  });

  it('a collector that hangs neither slows the session nor holds the flush beyond its bound', async () => {
    receiver = await startOtlpReceiver('hang');
    // The collector never answers; the session still runs to its end (nothing in it waits for an export) …
    const { rein, result } = await run({ protocol: 'http/json', timeoutMs: 30_000 });
    expect(result.status).toBe('completed');
    expect(receiver.requests.length).toBeGreaterThan(0);
    // … and a flush bounded at 300 ms stops waiting for the spans in flight, counting them as sent but not confirmed
    // (the collector has them), long before the export's own 30 s timeout.
    const started = Date.now();
    const stats = await rein.telemetry!.shutdown(300);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stats).toMatchObject({ ended: 6, exported: 0, dropped: 0, unconfirmed: 6, queued: 0, inFlight: 0 });
    expect(stats.unconfirmedReason).toContain('within 300 ms');
  });

  it('a collector that answers 500 costs its batches, counted, and never the session', async () => {
    receiver = await startOtlpReceiver('fail');
    const { rein, result } = await run({ protocol: 'http/json', timeoutMs: 400 });
    expect(result.status).toBe('completed');
    const stats = await rein.telemetry!.shutdown(10_000);
    expect(stats).toMatchObject({ ended: 6, exported: 0, dropped: 6 });
    expect(stats.failedExports).toBeGreaterThan(0);
  });
});
