import type { Attributes, HrTime, SpanContext } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { attr } from './gen-ai-attributes.js';
import type { GenAiSpan, SpanAttributes } from './span-types.js';
import { reinScope } from './instrumentation-scope.js';

/**
 * The bridge to the OpenTelemetry SDK: rein's finished spans as `ReadableSpan`s, the resource they describe, and
 * OTLP/JSON. This module imports OpenTelemetry packages, so rein loads it only when telemetry is on.
 */

/** What a span exporter is given: the `service.*` resource (defaults, then `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`, then options). */
export interface ResourceOptions {
  serviceName?: string;
  resourceAttributes?: SpanAttributes;
}

/**
 * The resource spans describe: the host's service as the host names it (options, then the environment). rein's own
 * version is the instrumentation scope's (`rein` + version on every span); it is `service.version` only when the
 * service is rein itself (no service name given), never the version of a host's service.
 */
export const resourceOf = (options: ResourceOptions = {}): Resource => {
  const given = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ ...(options.resourceAttributes as Attributes | undefined), ...(options.serviceName ? { [attr.serviceName]: options.serviceName } : {}) }));
  const named = given.attributes[attr.serviceName];
  const host = named !== undefined && named !== 'rein';
  return resourceFromAttributes(host ? { [attr.serviceName]: 'rein' } : { [attr.serviceName]: 'rein', [attr.serviceVersion]: reinScope.version }).merge(given);
};

const hrTimeOf = (ms: number): HrTime => {
  const nanos = Math.round(ms * 1e6);
  const seconds = Math.floor(nanos / 1e9);
  return [seconds, nanos - seconds * 1e9];
};

const kinds = { internal: 0, client: 2 } as const;
const statusCodes = { unset: 0, ok: 1, error: 2 } as const;
const sampled = 1;

/** One finished span as the SDK's `ReadableSpan` (what every `SpanExporter` takes). */
export const readableSpanOf = (span: GenAiSpan, resource: Resource): ReadableSpan => {
  const context: SpanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: sampled };
  return {
    name: span.name,
    kind: kinds[span.kind],
    spanContext: () => context,
    ...(span.parentSpanId ? { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: sampled, isRemote: false } } : {}),
    startTime: hrTimeOf(span.startMs),
    endTime: hrTimeOf(span.endMs),
    duration: hrTimeOf(span.endMs - span.startMs),
    status: { code: statusCodes[span.status.code], ...(span.status.message === undefined ? {} : { message: span.status.message }) },
    attributes: span.attributes as Attributes,
    links: span.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: sampled, isRemote: true }, attributes: link.attributes as Attributes })),
    events: span.events.map((event) => ({ name: event.name, time: hrTimeOf(event.at), attributes: event.attributes as Attributes })),
    ended: true,
    resource,
    instrumentationScope: reinScope,
    droppedAttributesCount: 0,
    droppedEventsCount: span.droppedEvents,
    droppedLinksCount: 0,
  };
};

/** One OTLP/JSON `ExportTraceServiceRequest` (`{ "resourceSpans": [ … ] }`, ids in hex) holding `spans`. */
export const otlpJsonBytesOf = (spans: readonly GenAiSpan[], resource: Resource): Uint8Array =>
  JsonTraceSerializer.serializeRequest(spans.map((span) => readableSpanOf(span, resource))) ?? new Uint8Array();

/** Hand `spans` to `exporter` in batches, one at a time; resolves with how many it took and the first error. */
export const exportBatches = async (exporter: SpanExporter, spans: readonly ReadableSpan[], batchSize = 512): Promise<{ exported: number; failed: number; error?: string }> => {
  let exported = 0;
  let failed = 0;
  let error: string | undefined;
  for (let start = 0; start < spans.length; start += batchSize) {
    const batch = spans.slice(start, start + batchSize);
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
      try {
        exporter.export(batch, resolve);
      } catch (thrown) {
        resolve({ code: 1, error: thrown instanceof Error ? thrown : new Error(String(thrown)) });
      }
    });
    if (result.code === 0) exported += batch.length;
    else {
      failed += batch.length;
      error ??= result.error?.message ?? 'the exporter reported a failure';
    }
  }
  return { exported, failed, ...(error ? { error } : {}) };
};
