import type { RecordEnvelope } from '../../models/envelope.js';
import type { Prices } from '../../models/price-table.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { displayEndpoint } from '../providers/wire-format.js';
import { spansOfRecords } from '../projections/spans.view.js';
import { resolveOtlpTarget } from '../telemetry/otlp-target.js';
import { traceIdOf } from '../telemetry/span-ids.js';
import { TelemetryError } from '../telemetry/telemetry-errors.js';
import { captureContentFrom, secretsFromEnvironment } from './telemetry-options.js';

/** The OTLP outputs of `rein trace`: `--format otlp-json` (stdout) and `--otlp <base url>` (a collector). */
export interface TraceExportFlags {
  format?: string;
  otlp?: string;
}

/** True when `rein trace` was asked for OpenTelemetry output rather than the report. */
export const wantsOtlp = (flags: TraceExportFlags): boolean => flags.format === 'otlp-json' || flags.otlp !== undefined;

/**
 * Export a stored session's spans: as one OTLP/JSON document on stdout (nothing else is written there), and/or to
 * a collector, reporting on stdout (stderr when stdout holds the document) how many spans went. Chat spans are priced
 * at `prices` (the configuration's, as `rein trace` prints them; default the shipped table). Throws
 * `TELEMETRY_EXPORT_FAILED` when the collector refused a batch or never answered.
 */
export const exportTrace = async (sessionId: string, stored: readonly RecordEnvelope[], flags: TraceExportFlags, env: NodeJS.ProcessEnv = process.env, prices?: Prices): Promise<void> => {
  const records = upcastRecords([...stored]);
  const options = { captureContent: captureContentFrom(env), secrets: secretsFromEnvironment(env), ...(prices ? { prices } : {}) };
  const target = flags.otlp === undefined ? undefined : resolveOtlpTarget({ endpoint: flags.otlp }, env)!;
  const spans = spansOfRecords(records, options);
  const { exportBatches, otlpJsonBytesOf, readableSpanOf, resourceOf } = await import('../telemetry/otel-bridge.js');
  const resource = resourceOf();
  if (flags.format === 'otlp-json') {
    process.stdout.write(otlpJsonBytesOf(spans, resource));
    process.stdout.write('\n');
  }
  if (!target) return;
  const { otlpExporterFor } = await import('../telemetry/telemetry.js');
  const exporter = await otlpExporterFor(target);
  const result = await exportBatches(exporter, spans.map((span) => readableSpanOf(span, resource)));
  await exporter.shutdown().catch(() => undefined);
  const where = displayEndpoint(target.url);
  if (result.failed > 0) throw new TelemetryError('TELEMETRY_EXPORT_FAILED', `${result.failed} of ${spans.length} spans of ${sessionId} were not accepted by ${where}: ${result.error ?? 'unknown reason'}`);
  const line = `exported ${result.exported} spans of ${sessionId} (trace ${traceIdOf(sessionId)}) to ${where} (${target.protocol})\n`;
  (flags.format === 'otlp-json' ? process.stderr : process.stdout).write(line);
};
