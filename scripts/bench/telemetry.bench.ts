import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { spansOfRecords } from '../../src/projections/spans.view.js';
import { exportBatches, otlpJsonBytesOf, readableSpanOf, resourceOf } from '../../src/telemetry/otel-bridge.js';
import { formatMs, median, runBenchSession } from './bench-support.js';

/**
 * Telemetry benchmarks. (1) The cost live export adds to a tool round trip: the same scripted session of model →
 * no-op-tool round trips with telemetry off and on (an in-memory exporter, so the figure is rein's own work:
 * the span projection, the queue, building `ReadableSpan`s), runs interleaved, ratio of medians (target ≤ 1.10).
 * (2) Exporting a 10,000-round-trip session from the log: read, spans, OTLP/JSON document and an export call
 * (target ≤ 2 s), against reading and JSON-serialising the same records.
 */
export const main = async (roundTrips = 1_000, exportRoundTrips = 10_000): Promise<void> => {
  process.stdout.write('telemetry (OpenTelemetry GenAI spans)\n');
  for (const durability of ['memory', 'sync'] as const) {
    const off = { wall: [] as number[], cpu: [] as number[] };
    const on = { wall: [] as number[], cpu: [] as number[] };
    let spans = 0;
    const measure = async (into: typeof off, telemetry?: { exporter: InMemorySpanExporter }) => {
      const cpu = process.cpuUsage();
      const run = await runBenchSession({ roundTrips, durability, ...(telemetry ? { telemetry } : {}) });
      const used = process.cpuUsage(cpu);
      into.wall.push(run.totalMs / roundTrips);
      into.cpu.push((used.user + used.system) / 1000 / roundTrips);
      await run.cleanup();
    };
    for (let round = 0; round < 5; round++) {
      await measure(off);
      const exporter = new InMemorySpanExporter();
      await measure(on, { exporter });
      spans = exporter.getFinishedSpans().length;
    }
    const ratio = (key: 'wall' | 'cpu') => median(on[key]) / median(off[key]);
    process.stdout.write(
      `  live export, ${durability.padEnd(6)} store, ${roundTrips} round trips (${spans} spans): ${formatMs(median(on.wall))} per round trip with telemetry vs ${formatMs(median(off.wall))} without · ratio ${ratio('wall').toFixed(3)}× wall, ${ratio('cpu').toFixed(3)}× CPU (${formatMs(median(on.cpu))} vs ${formatMs(median(off.cpu))}) (target ≤ 1.10×)\n`,
    );
  }

  const recorded = await runBenchSession({ roundTrips: exportRoundTrips, durability: 'memory' });
  const baselineStarted = performance.now();
  const plainRecords = await recorded.store.read(recorded.sessionId);
  const plainBytes = Buffer.byteLength(JSON.stringify(plainRecords));
  const baselineMs = performance.now() - baselineStarted;
  const started = performance.now();
  const records = await recorded.store.read(recorded.sessionId);
  const spans = spansOfRecords(records);
  const resource = resourceOf();
  const documentBytes = otlpJsonBytesOf(spans, resource).length;
  const exporter = new InMemorySpanExporter();
  const result = await exportBatches(exporter, spans.map((span) => readableSpanOf(span, resource)));
  const exportMs = performance.now() - started;
  await recorded.cleanup();
  process.stdout.write(
    `  export from the log, ${exportRoundTrips} round trips (${records.length} records → ${spans.length} spans, ${(documentBytes / 1e6).toFixed(1)} MB OTLP/JSON, ${result.exported} exported): ${(exportMs / 1000).toFixed(2)} s (target ≤ 2 s) · read + JSON of the records ${(baselineMs / 1000).toFixed(2)} s (${(plainBytes / 1e6).toFixed(1)} MB) · ratio ${(exportMs / baselineMs).toFixed(2)}×\n`,
  );
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
