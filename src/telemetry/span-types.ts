/** An attribute value as OpenTelemetry accepts it: a primitive or a homogeneous array of primitives. */
export type SpanAttributeValue = string | number | boolean | readonly string[] | readonly number[] | readonly boolean[];

export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** A span event: a fact that happened at one moment of a span (a permission decision, a retry, a verification). */
export interface SpanEventData {
  readonly name: string;
  /** Epoch milliseconds, from the record that reports it. */
  readonly at: number;
  readonly attributes: SpanAttributes;
}

/** `internal` for agents and tool calls, `client` for model calls (a request to a provider). */
export type SpanKindName = 'internal' | 'client';

/** `unset` is the OpenTelemetry default for an operation that did not fail. */
export interface SpanStatusData {
  readonly code: 'unset' | 'ok' | 'error';
  readonly message?: string;
}

/** A link to a span of another trace (a fork's root links to the root of the session it was forked from). */
export interface SpanLinkData {
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: SpanAttributes;
}

/**
 * One finished span, as rein builds it from the log: ids in lower-case hex, times in epoch milliseconds. It maps
 * one-to-one onto an OpenTelemetry `ReadableSpan` and an OTLP span.
 */
export interface GenAiSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: SpanKindName;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: SpanAttributes;
  readonly events: readonly SpanEventData[];
  /** Events beyond the per-span limit (128), counted and left out. */
  readonly droppedEvents: number;
  readonly links: readonly SpanLinkData[];
  readonly status: SpanStatusData;
}
