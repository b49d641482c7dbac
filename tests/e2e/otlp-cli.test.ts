import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { jsonSpans, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'HELLO\n' } }] },
    { text: 'Done.' },
  ],
};

/** No inherited OTLP settings: each test says what it wants. */
const clean = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_SDK_DISABLED: '', OTEL_TRACES_EXPORTER: '' };
const key = (span: ReceivedSpan) => `${span.traceId} ${span.spanId} ${span.parentSpanId} ${span.name}`;

describe('rein run / trace with OpenTelemetry', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let receiver: OtlpReceiver;
  let sessionId: string;
  let stderr: string;
  const cwd = (env: NodeJS.ProcessEnv = {}) => ({ cwd: workspace.path, env: { ...clean, ...env } });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-otlp-cli-');
    receiver = await startOtlpReceiver();
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await runInProcess(['run', 'shout the greeting', '--script', 'script.json', '--approve', 'write', '--otlp', receiver.url], cwd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }));
    expect(run.code, run.stderr).toBe(0);
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    stderr = run.stderr;
  });
  afterAll(async () => {
    await receiver.close();
    await workspace.remove();
  });

  it('rein run --otlp sends every span to <base>/v1/traces as OTLP/JSON and says so on stderr', () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((request) => request.path === '/v1/traces' && request.json !== undefined)).toBe(true);
    const names = receiver.spans().map((span) => span.name).sort();
    expect(names).toEqual(['chat script', 'chat script', 'chat script', 'execute_tool read', 'execute_tool write', 'invoke_agent rein']);
    expect(stderr).toContain(`telemetry: 6 spans sent to ${receiver.url}/v1/traces (http/json)`);
  });

  it('rein trace --format otlp-json writes one OTLP/JSON document, and only that, with the live spans and ids', async () => {
    const trace = await runInProcess(['trace', sessionId, '--format', 'otlp-json'], cwd());
    expect(trace.code, trace.stderr).toBe(0);
    const document = JSON.parse(trace.stdout);
    expect(Object.keys(document)).toEqual(['resourceSpans']);
    expect(jsonSpans(document).map(key).sort()).toEqual(receiver.spans().map(key).sort());
    const spans = document.resourceSpans[0].scopeSpans[0].spans as Array<Record<string, any>>;
    const write = spans.find((span) => span.name === 'execute_tool write')!;
    expect(write.attributes).toEqual(expect.arrayContaining([{ key: 'gen_ai.tool.name', value: { stringValue: 'write' } }]));
    expect(write.events.map((event: { name: string }) => event.name)).toContain('rein.permission.decided');
    expect(write.startTimeUnixNano).toMatch(/^\d+$/);
  });

  it('rein trace --otlp exports the finished session again (protobuf), with the same ids', async () => {
    const again = await startOtlpReceiver();
    try {
      const trace = await runInProcess(['trace', sessionId, '--otlp', again.url], cwd());
      expect(trace.code, trace.stderr).toBe(0);
      expect(trace.stdout).toMatch(new RegExp(`^exported 6 spans of ${sessionId} \\(trace [0-9a-f]{32}\\) to ${again.url}/v1/traces \\(http/protobuf\\)\\n$`));
      expect(again.requests.every((request) => request.headers['content-type'] === 'application/x-protobuf')).toBe(true);
      expect(again.spans().map(key).sort()).toEqual(receiver.spans().map(key).sort());
    } finally {
      await again.close();
    }
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT turns the export on without a flag; OTEL_SDK_DISABLED turns it off', async () => {
    const collector = await startOtlpReceiver();
    try {
      const run = await runInProcess(['run', 'again', '--script', 'script.json', '--approve', 'write'], cwd({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }));
      expect(run.code, run.stderr).toBe(0);
      expect(collector.spans().map((span) => span.name)).toContain('execute_tool read');
      const before = collector.requests.length;
      const off = await runInProcess(['run', 'quiet', '--script', 'script.json', '--approve', 'write'], cwd({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }));
      expect(off.code, off.stderr).toBe(0);
      expect(off.stderr).not.toContain('telemetry:');
      expect(collector.requests.length).toBe(before);
    } finally {
      await collector.close();
    }
  });

  it('a collector that never answers does not stop rein run from finishing: it reports the spans it received as sent but not confirmed, not dropped (trial 6 F18)', async () => {
    const hanging = await startOtlpReceiver('hang');
    try {
      const run = await runInProcess(['run', 'hang on', '--script', 'script.json', '--approve', 'write', '--otlp', hanging.url], cwd());
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Done.');
      expect(hanging.requests.length).toBeGreaterThan(0);
      // The collector received every span; only its answer is missing.
      expect(new Set(hanging.spans().map((span) => span.spanId)).size).toBe(6);
      expect(run.stderr).toMatch(/telemetry: 0 of 6 spans confirmed by .*; 6 sent but not confirmed: the collector did not answer (within 2000 ms|in time \(Request timed out\)) \(it may have them\)\n/);
      expect(run.stderr).not.toContain('dropped');
    } finally {
      await hanging.close();
    }
  });

  it('refuses an endpoint or protocol it cannot use before anything runs (exit 2)', async () => {
    const badUrl = await runInProcess(['run', 'x', '--script', 'script.json', '--otlp', 'ftp://127.0.0.1:1'], cwd());
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('TELEMETRY_CONFIG_INVALID');
    const grpc = await runInProcess(['run', 'x', '--script', 'script.json', '--otlp', receiver.url], cwd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }));
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toContain('TELEMETRY_CONFIG_INVALID');
    const format = await runInProcess(['trace', sessionId, '--format', 'yaml'], cwd());
    expect(format.code).toBe(2);
  });
});
