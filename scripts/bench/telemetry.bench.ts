import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { spanProjection, spansOfRecords } from '../../src/projections/spans.view.js';
import { SpanShipper } from '../../src/telemetry/span-shipper.js';
import { readSessionRecords } from '../../src/session/read-session.js';
import { exportBatches, otlpJsonBytesOf, readableSpanOf, resourceOf } from '../../src/telemetry/otel-bridge.js';
import { formatMs, median, runBenchSession } from './bench-support.js';

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/**
 * Telemetry benchmarks.
 * (1) What live export adds to a tool round trip: the same scripted session of model → no-op-tool round trips with
 *     telemetry off and on (an in-memory exporter, so the figure is rein's own work: the span projection, the queue,
 *     building `ReadableSpan`s), five runs of each interleaved, ratio of the medians of wall time and of the
 *     process's CPU time per round trip (target ≤ 1.10). On the in-memory store a session never yields to the event
 *     loop, so the in-memory exporter (which answers on a timer) can take only the first batch: the rest is dropped,
 *     and the line says so.
 * (2) Exporting a 10,000-step session (5,000 round trips; a step is one input applied) from a LevelDB log: read and
 *     upcast the records, fold them into spans, write the OTLP/JSON document, hand the spans to an exporter
 *     (target ≤ 2 s), against reading the same records and serialising them as JSON.
 */
export const main = async (roundTrips = 1_000, exportSteps = 10_000): Promise<void> => {
  process.stdout.write('telemetry (OpenTelemetry GenAI spans)\n');
  for (const durability of ['sync', 'memory'] as const) {
    const off = { wall: [] as number[], cpu: [] as number[] };
    const on = { wall: [] as number[], cpu: [] as number[] };
    let exported = 0;
    let ended = 0;
    for (let round = 0; round < 5; round++) {
      for (const traced of [false, true]) {
        const exporter = new InMemorySpanExporter();
        const cpu = process.cpuUsage();
        const run = await runBenchSession({ roundTrips, durability, ...(traced ? { telemetry: { exporter } } : {}) });
        const into = traced ? on : off;
        into.cpu.push(cpuMs(cpu) / roundTrips);
        into.wall.push(run.totalMs / roundTrips);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (traced) {
          exported = exporter.getFinishedSpans().length;
          ended = 2 * roundTrips + 2;
        }
        await run.cleanup();
      }
    }
    const ratio = (key: 'wall' | 'cpu') => (median(on[key]) / median(off[key])).toFixed(3);
    process.stdout.write(
      `  live export, ${durability.padEnd(6)} store, ${roundTrips} round trips: ${formatMs(median(on.wall))} per round trip with telemetry vs ${formatMs(median(off.wall))} without · ratio ${ratio('wall')}× wall, ${ratio('cpu')}× CPU (${formatMs(median(on.cpu))} vs ${formatMs(median(off.cpu))} of CPU) (target ≤ 1.10×) · ${exported} of ${ended} spans exported\n`,
    );
  }

  // The live path's own work, replayed over a recorded session's records (what a follower does per record: skip or
  // fold, then ship what ended), timed in a loop: a steadier figure than the A/B difference on a shared machine.
  const sample = await runBenchSession({ roundTrips, durability: 'memory' });
  const sampleRecords = await sample.store.read(sample.sessionId);
  const baselineCpu = sample.totalMs / roundTrips;
  await sample.cleanup();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 7; round++) {
    const projection = spanProjection();
    const exporter = new InMemorySpanExporter();
    const resource = resourceOf();
    const shipper = new SpanShipper(exporter, (span) => readableSpanOf(span, resource), { maxQueueSize: 1_000_000 });
    let view = projection.initial();
    const started = performance.now();
    for (const record of sampleRecords) {
      if (!projection.handles(record.type)) continue;
      view = projection.apply(view, record);
      shipper.push(view.ended);
    }
    await shipper.flush(10_000);
    best = Math.min(best, performance.now() - started);
  }
  const perRoundTrip = best / roundTrips;
  process.stdout.write(`  live path's own work (fold, ship, in-memory export; replayed over ${sampleRecords.length} records): ${(perRoundTrip * 1000).toFixed(1)} µs per round trip, ${((perRoundTrip / baselineCpu) * 100).toFixed(1)}% of a ${formatMs(baselineCpu)} in-memory round trip measured in the same run\n`);

  const recorded = await runBenchSession({ roundTrips: exportSteps / 2, durability: 'relaxed' });
  const baselineStarted = performance.now();
  const plain = await readSessionRecords(recorded.store, recorded.sessionId);
  const plainBytes = Buffer.byteLength(JSON.stringify(plain));
  const baselineMs = performance.now() - baselineStarted;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const records = await readSessionRecords(recorded.store, recorded.sessionId);
  const readMs = performance.now() - started;
  const spans = spansOfRecords(records);
  const spansMs = performance.now() - started - readMs;
  const resource = resourceOf();
  const documentBytes = otlpJsonBytesOf(spans, resource).length;
  const result = await exportBatches(new InMemorySpanExporter(), spans.map((span) => readableSpanOf(span, resource)));
  const exportMs = performance.now() - started;
  const exportCpu = cpuMs(cpu);
  await recorded.cleanup();
  process.stdout.write(
    `  export from the log, ${exportSteps} steps (${records.length} records → ${spans.length} spans, ${(documentBytes / 1e6).toFixed(1)} MB of OTLP/JSON, ${result.exported} exported): ${(exportMs / 1000).toFixed(2)} s (read ${(readMs / 1000).toFixed(2)} s, spans ${(spansMs / 1000).toFixed(2)} s; ${(exportCpu / 1000).toFixed(2)} s of CPU) (target ≤ 2 s) · read + JSON of the records ${(baselineMs / 1000).toFixed(2)} s (${(plainBytes / 1e6).toFixed(1)} MB) · ratio ${(exportMs / baselineMs).toFixed(2)}×\n`,
  );
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 1_000), Number(process.argv[3] ?? 10_000));
