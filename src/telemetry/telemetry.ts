import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { spansOfRecords, type SpanViewOptions } from '../projections/spans.view.js';
import { ReinError } from '../host/host-errors.js';
import { readSessionRecords } from '../session/read-session.js';
import type { ResourceOptions } from './otel-bridge.js';
import { resolveOtlpTarget, type OtlpTarget, type OtlpTargetOptions } from './otlp-target.js';
import { traceIdOf } from './span-ids.js';
import { TelemetryError } from './telemetry-errors.js';
import { modelInputsOf } from './model-inputs.js';

/**
 * The public telemetry functions. None of them loads OpenTelemetry until it is called: the SDK, the exporters and
 * the OTLP serializer are imported on first use, so rein's start-up does not pay for them.
 */

export interface OtlpExporterOptions extends OtlpTargetOptions {
  /** Extra request headers (an API key for a hosted backend); `OTEL_EXPORTER_OTLP_HEADERS` is read as well. */
  headers?: Record<string, string>;
}

/** An OTLP/HTTP `SpanExporter` for a resolved target (protobuf or JSON). */
export const otlpExporterFor = async (target: OtlpTarget, headers?: Record<string, string>): Promise<SpanExporter> => {
  const config = { url: target.url, timeoutMillis: target.timeoutMs, ...(headers ? { headers } : {}) };
  if (target.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(config);
};

/**
 * An OTLP/HTTP span exporter, configured as the OpenTelemetry exporters are (`endpoint` is the base URL; spans go
 * to `<endpoint>/v1/traces`; the `OTEL_EXPORTER_OTLP_*` variables fill in the rest). Rejects with
 * `TELEMETRY_CONFIG_INVALID` when no endpoint is given or set, or a value is bad.
 */
export const createOtlpExporter = async (options: OtlpExporterOptions = {}): Promise<SpanExporter> => {
  const target = resolveOtlpTarget(options);
  if (!target) throw new TelemetryError('TELEMETRY_CONFIG_INVALID', 'no OTLP endpoint: pass endpoint or set OTEL_EXPORTER_OTLP_ENDPOINT');
  return otlpExporterFor(target, options.headers);
};

export interface LogExportOptions extends SpanViewOptions, ResourceOptions {
  exporter: SpanExporter;
  /** Spans per export call (default 512). */
  batchSize?: number;
}

/** What an export from the log sent. */
export interface LogExportResult {
  traceId: string;
  spans: number;
  exported: number;
  failed: number;
  error?: string;
}

/**
 * Export a stored session's spans (`spansOfRecords`: the same ids and spans a live export sent) to `exporter`, in
 * batches, one at a time. Rejects with `SESSION_NOT_FOUND` for an unknown session; a failing exporter is reported
 * in the result (`failed`, `error`), not thrown.
 */
export const exportSessionSpans = async (store: EventStore, sessionId: string, options: LogExportOptions): Promise<LogExportResult> => {
  const records = await readSessionRecords(store, sessionId);
  if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  // With content captured, each chat span carries its prompt: the model inputs are read from the blob store first.
  const inputs = options.captureContent === true && options.modelInputOf === undefined ? await modelInputsOf(store, sessionId, records) : undefined;
  const spans = spansOfRecords(records, inputs ? { ...options, modelInputOf: (ref) => inputs.get(ref) } : options);
  const { exportBatches, readableSpanOf, resourceOf } = await import('./otel-bridge.js');
  const resource = resourceOf(options);
  const result = await exportBatches(options.exporter, spans.map((span) => readableSpanOf(span, resource)), options.batchSize);
  return { traceId: traceIdOf(sessionId), spans: spans.length, ...result };
};

/** A session's spans as one OTLP/JSON document (`{ "resourceSpans": [ … ] }`, ids in hex), what an OTLP/JSON exporter would post. */
export const otlpJsonOf = async (records: readonly RecordEnvelope[], options: SpanViewOptions & ResourceOptions = {}): Promise<string> => {
  const { otlpJsonBytesOf, resourceOf } = await import('./otel-bridge.js');
  return Buffer.from(otlpJsonBytesOf(spansOfRecords(records, options), resourceOf(options))).toString('utf8');
};
