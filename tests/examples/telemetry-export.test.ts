import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

const example = fileURLToPath(new URL('../../dist/scripts/examples/telemetry-export.js', import.meta.url));

describe('the OpenTelemetry example', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('runs: the collector gets every span live, then the same ones again from the log', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [example, receiver.url], { env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });
    expect(stdout).toContain('completed');
    expect(stdout).toMatch(/exported: 4,\s+dropped: 0/);
    const spans = receiver.spans();
    expect(spans).toHaveLength(8);
    const ids = (half: typeof spans) => half.map((span) => span.spanId).sort();
    expect(ids(spans.slice(0, 4))).toEqual(ids(spans.slice(4)));
    const body = JSON.stringify(receiver.requests.map((request) => request.json));
    expect(body).toContain('remember the [redacted]');
    expect(body).not.toContain('milk');
  });
});
