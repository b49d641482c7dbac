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
import { modelInputRefsOf, readModelInput } from './model-inputs.js';
import type { ModelInputContent } from '../projections/span-attributes.js';

/** `createRein({ telemetry })`: where spans go and what they hold (docs/telemetry.md). */
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
  // With content captured, a chat span carries its prompt: the model input blob is read before its record is folded.
  const capture = options.captureContent === true && options.modelInputOf === undefined;
  const shared = spanProjection(options);
  const loading = new Set<Promise<void>>();
  /** Wait (at most `timeoutMs`) until no session's records wait for a model input to be read. */
  const settled = async (timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (loading.size > 0 && Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...loading]), new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
      clearTimeout(timer);
    }
  };
  let failures = 0;
  let lastFailure: string | undefined;

  const stats = (): TelemetryStats => {
    const current = shipper.stats();
    return failures > 0 && !current.lastError ? { ...current, lastError: lastFailure } : current;
  };

  return {
    stats,
    flush: async (timeoutMs = 2_000) => {
      await settled(timeoutMs);
      return shipper.flush(timeoutMs);
    },
    shutdown: async (timeoutMs = 2_000) => {
      await settled(timeoutMs);
      return shipper.shutdown(timeoutMs);
    },
    watch(session, { store, silentThrough }) {
      const inputs = new Map<string, ModelInputContent>();
      const projection = capture ? spanProjection({ ...options, modelInputOf: (ref) => inputs.get(ref) }) : shared;
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
      // Records wait here, in order, while a model input they name is read (only with content captured).
      const backlog: RecordEnvelope[] = [];
      let reading = false;
      const feed = (record: RecordEnvelope): void => {
        backlog.push(record);
        drain();
      };
      const drain = (): void => {
        while (backlog.length > 0 && !reading && !stopped) {
          const next = backlog[0]!;
          const missing = capture && next.seq > seq ? modelInputRefsOf(next).filter((ref) => !inputs.has(ref)) : [];
          if (missing.length > 0) {
            reading = true;
            const read: Promise<void> = Promise.all(missing.map(async (ref) => {
              const input = await readModelInput(store, session.id, ref);
              if (input) inputs.set(ref, input);
            })).then(() => {
              loading.delete(read);
              reading = false;
              drain();
            });
            loading.add(read);
            return;
          }
          backlog.shift();
          fold(next);
          for (const ref of modelInputRefsOf(next)) inputs.delete(ref);
        }
        if (stopped) backlog.length = 0;
      };
      const fold = (record: RecordEnvelope): void => {
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
