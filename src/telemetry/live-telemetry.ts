import type { Subscription } from 'rxjs';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { ProjectionGapError } from '../projections/projection-errors.js';
import { spanProjection, type SpanView, type SpanViewOptions } from '../projections/spans.view.js';
import { readSessionRecords } from '../session/read-session.js';
import type { ReinSession } from '../session/session-handle.js';
import { readableSpanOf, resourceOf, type ResourceOptions } from './otel-bridge.js';
import { SpanShipper, type ShipperOptions, type TelemetryStats } from './span-shipper.js';
import { TelemetryError } from './telemetry-errors.js';

/** `createRein({ telemetry })`: where spans go and what they hold (README: *OpenTelemetry*). */
export interface TelemetryOptions extends SpanViewOptions, ResourceOptions, ShipperOptions {
  /** Any OpenTelemetry `SpanExporter`: OTLP (see `createOtlpExporter`), in-memory, console, a vendor's. */
  exporter: SpanExporter;
}

/** A harness's telemetry: what it did so far, and a bounded flush for the end of a process. */
export interface TelemetryHandle {
  stats(): TelemetryStats;
  /** Send everything queued and wait at most `timeoutMs` (default 2 s); what did not make it is counted as dropped. */
  flush(timeoutMs?: number): Promise<TelemetryStats>;
  /** Flush, then shut the exporter down, all within `timeoutMs` (default 2 s). */
  shutdown(timeoutMs?: number): Promise<TelemetryStats>;
}

/** The harness side: follow a session's records and ship each span as it ends. */
export interface LiveTelemetry extends TelemetryHandle {
  /**
   * Fold the session's records (history from the store, then every durable record) and ship every span that ends
   * after seq `silentThrough` (a resumed session's earlier spans were shipped by the process that ran them).
   * Never throws and never slows the session: a failure stops this session's telemetry and is counted.
   */
  watch(session: ReinSession, options: { store: EventStore; silentThrough: number }): void;
}

/** Build live telemetry (this module loads OpenTelemetry; `createRein` imports it only when telemetry is on). */
export const createLiveTelemetry = (options: TelemetryOptions): LiveTelemetry => {
  if (typeof options.exporter?.export !== 'function' || typeof options.exporter.shutdown !== 'function') {
    throw new TelemetryError('TELEMETRY_CONFIG_INVALID', 'telemetry.exporter must be an OpenTelemetry SpanExporter (with export and shutdown)');
  }
  const resource = resourceOf(options);
  const shipper = new SpanShipper(options.exporter, (span) => readableSpanOf(span, resource), options);
  const projection = spanProjection(options);
  let failures = 0;
  let lastFailure: string | undefined;

  const stats = (): TelemetryStats => {
    const current = shipper.stats();
    return failures > 0 && !current.lastError ? { ...current, lastError: lastFailure } : current;
  };

  return {
    stats,
    flush: (timeoutMs) => shipper.flush(timeoutMs),
    shutdown: (timeoutMs) => shipper.shutdown(timeoutMs),
    watch(session, { store, silentThrough }) {
      let view: SpanView = projection.initial();
      let buffer: RecordEnvelope[] | undefined = [];
      let subscription: Subscription | undefined;
      let stopped = false;
      const stop = () => {
        stopped = true;
        buffer = undefined;
        subscription?.unsubscribe();
      };
      let seq = 0;
      const feed = (record: RecordEnvelope): void => {
        if (stopped || record.seq <= seq) return;
        try {
          if (record.seq !== seq + 1) throw new ProjectionGapError(projection.name, seq + 1, record.seq);
          seq = record.seq;
          // The kernel's delivery rules, without a view copy for the records spans do not read (most of a step's).
          if (!projection.handles(record.type)) return;
          view = projection.apply(view, record);
          if (record.seq > silentThrough) shipper.push(view.ended);
        } catch (error) {
          failures++;
          lastFailure = `telemetry of ${session.id} stopped at seq ${record.seq}: ${error instanceof Error ? error.message : String(error)}`;
          return stop();
        }
        // This process is done with the session when it ends, or when it is interrupted here (a resume watches anew).
        if (view.rootEnded || (record.type === 'session.interrupted' && record.actor === 'root' && record.seq > silentThrough)) stop();
      };
      subscription = session.records$.subscribe((record) => (buffer ? buffer.push(record) : feed(record)));
      if (stopped) subscription.unsubscribe();
      readSessionRecords(store, session.id).then(
        (history) => {
          const pending = buffer ?? [];
          buffer = undefined;
          for (const record of history) feed(record);
          for (const record of pending) feed(record);
        },
        (error: unknown) => {
          failures++;
          lastFailure = `telemetry of ${session.id} could not read its history: ${error instanceof Error ? error.message : String(error)}`;
          stop();
        },
      );
    },
  };
};
