import type { RecordEnvelope } from '../../models/envelope.js';
import type { GenAiSpan, SpanAttributeValue, SpanEventData, SpanKindName, SpanLinkData, SpanStatusData } from '../telemetry/span-types.js';
import { reinAttr } from '../telemetry/gen-ai-attributes.js';
import { emptyMap, entriesOf, getIn, removeIn, setIn, valuesOf, type PersistentMap } from './persistent-map.js';
import { prepend, toArray, type PersistentList } from './persistent-list.js';
import type { ViewState } from './projection.js';

/** Events a span keeps (the OpenTelemetry SDK's default limit); later ones are counted in `droppedEvents`. */
export const maxEventsPerSpan = 128;

/** In an attribute patch: remove the attribute (an `undefined` value leaves it as it is). */
export const removed: unique symbol = Symbol('removed');

/** Attributes a record sets on an open span; `undefined` values are skipped, `removed` ones deleted. */
export type AttributePatch = Readonly<Record<string, SpanAttributeValue | undefined | typeof removed>>;

/**
 * A span that has started and not ended yet, keyed `agent:<path>`, `chat:<effectId>` or `tool:<callId>`. Its
 * attributes are kept as the patches records applied (newest first) and resolved once, when it ends, so a record
 * costs the same however many attributes the span has.
 */
export interface OpenSpan {
  readonly key: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** The agent (actor path) the span belongs to; an agent span names itself. */
  readonly agent: string;
  readonly name: string;
  readonly kind: SpanKindName;
  /** The earliest time a record of this span reports; `proposedAt` stands in while no record has come yet. */
  readonly startMs: number | undefined;
  readonly proposedAt: number;
  readonly patches: PersistentList<AttributePatch> | undefined;
  /** Model calls: the highest attempt number seen. */
  readonly attempts: number;
  readonly events: PersistentList<SpanEventData> | undefined;
  readonly droppedEvents: number;
  readonly links: readonly SpanLinkData[];
}

/** The span view: what is open now, and the spans the last record ended (what a live exporter ships). */
export interface SpanView extends ViewState {
  readonly stream: string | undefined;
  readonly traceId: string | undefined;
  readonly sessionId: string | undefined;
  readonly provider: { name: string; model?: string; source?: string; fallbacks?: ReadonlyArray<{ name: string; model?: string; source?: string }> } | undefined;
  readonly open: PersistentMap<OpenSpan>;
  /** Agents whose span ended (a late record of theirs never opens a second span with the same id). */
  readonly closedAgents: PersistentMap<true>;
  /** Pending approvals: approval id → the key of the tool span that waits for it. */
  readonly approvals: PersistentMap<string>;
  readonly cancelled: boolean;
  readonly rootEnded: boolean;
  /** The latest record time seen (record times are not monotonic: facts carry the time they happened). */
  readonly lastAt: number;
  /** Records that named a call or agent the view did not know (a broken link in the chain). */
  readonly unlinked: number;
  /** The spans that ended at record `seq`, children before parents; empty for most records. */
  readonly ended: readonly GenAiSpan[];
  /**
   * An input read but not applied yet: the step record after it holds facts that came before it (its model call's
   * context and attempt, a read-only tool's start), which its spans need first. Applied with the next record.
   */
  readonly held?: RecordEnvelope;
}

const noSpans: readonly GenAiSpan[] = Object.freeze([]);

export const initialSpanView = (): SpanView => ({
  seq: 0,
  stream: undefined,
  traceId: undefined,
  sessionId: undefined,
  provider: undefined,
  open: emptyMap(),
  closedAgents: emptyMap(),
  approvals: emptyMap(),
  cancelled: false,
  rootEnded: false,
  lastAt: 0,
  unlinked: 0,
  ended: noSpans,
});

/** The mutable draft one `apply` works on: a fresh copy of the view, so the argument is never changed. */
export type SpanDraft = { -readonly [K in keyof SpanView]: SpanView[K] };

/** A copy of `view` at `seq` with nothing ended yet (built field by field: one shape, cheap to make). */
export const draftOf = (view: SpanView, seq: number, lastAt: number): SpanDraft => ({
  seq,
  stream: view.stream,
  traceId: view.traceId,
  sessionId: view.sessionId,
  provider: view.provider,
  open: view.open,
  closedAgents: view.closedAgents,
  approvals: view.approvals,
  cancelled: view.cancelled,
  rootEnded: view.rootEnded,
  lastAt,
  unlinked: view.unlinked,
  ended: noSpans,
  held: undefined,
});

export const spanOf = (draft: SpanDraft, key: string): OpenSpan | undefined => getIn(draft.open, key);

export const putSpan = (draft: SpanDraft, span: OpenSpan): void => {
  draft.open = setIn(draft.open, span.key, span);
};

/** A copy of `span` with `changes` (built field by field). */
export const spanWith = (span: OpenSpan, changes: Partial<OpenSpan>): OpenSpan => ({
  key: span.key,
  spanId: span.spanId,
  parentSpanId: 'parentSpanId' in changes ? changes.parentSpanId : span.parentSpanId,
  agent: span.agent,
  name: changes.name ?? span.name,
  kind: span.kind,
  startMs: 'startMs' in changes ? changes.startMs : span.startMs,
  proposedAt: span.proposedAt,
  patches: 'patches' in changes ? changes.patches : span.patches,
  attempts: changes.attempts ?? span.attempts,
  events: 'events' in changes ? changes.events : span.events,
  droppedEvents: changes.droppedEvents ?? span.droppedEvents,
  links: changes.links ?? span.links,
});

/** Widen a span's start to `at` when `at` is earlier than what it has. */
export const touch = (span: OpenSpan, at: number): OpenSpan => (span.startMs === undefined || at < span.startMs ? spanWith(span, { startMs: at }) : span);

export const withAttributes = (span: OpenSpan, patch: AttributePatch): OpenSpan => spanWith(span, { patches: prepend(span.patches, patch) });

export const withEvent = (span: OpenSpan, name: string, at: number, attributes: Readonly<Record<string, SpanAttributeValue | undefined>>): OpenSpan => {
  if ((span.events?.size ?? 0) >= maxEventsPerSpan) return spanWith(span, { droppedEvents: span.droppedEvents + 1 });
  const clean: Record<string, SpanAttributeValue> = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) clean[key] = value;
  }
  return spanWith(span, { events: prepend(span.events, { name, at, attributes: clean }) });
};

/** Change the open span `key` (if it is open). */
export const updateSpan = (draft: SpanDraft, key: string, change: (span: OpenSpan) => OpenSpan): boolean => {
  const span = spanOf(draft, key);
  if (!span) return false;
  putSpan(draft, change(span));
  return true;
};

const redactValue = (value: SpanAttributeValue, redact: (text: string) => string): SpanAttributeValue => {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value) && value.length > 0 && typeof value[0] === 'string') return (value as readonly string[]).map(redact);
  return value;
};

/** The attributes the patches add up to (oldest first), every string passed through `redact`. */
const resolveAttributes = (patches: PersistentList<AttributePatch> | undefined, last: AttributePatch | undefined, redact: (text: string) => string): Record<string, SpanAttributeValue> => {
  const merged: Record<string, SpanAttributeValue | typeof removed> = {};
  const apply = (patch: AttributePatch) => {
    for (const key in patch) {
      const value = patch[key];
      if (value !== undefined) merged[key] = value;
    }
  };
  for (const patch of toArray(patches)) apply(patch);
  if (last) apply(last);
  const out: Record<string, SpanAttributeValue> = {};
  for (const key in merged) {
    const value = merged[key]!;
    if (value !== removed) out[key] = redactValue(value, redact);
  }
  return out;
};

const redactEventAttributes = (attributes: Readonly<Record<string, SpanAttributeValue>>, redact: (text: string) => string): Record<string, SpanAttributeValue> => {
  const out: Record<string, SpanAttributeValue> = {};
  for (const key in attributes) out[key] = redactValue(attributes[key]!, redact);
  return out;
};

/** How a closing span is rendered: its final status and attributes, and redaction of every string it carries. */
export interface CloseOptions {
  status: SpanStatusData;
  attributes?: AttributePatch;
  redact: (text: string) => string;
}

/** End the open span `key` at `at`: it leaves the open set and joins `ended` as a finished span. */
export const closeSpan = (draft: SpanDraft, key: string, at: number, options: CloseOptions): GenAiSpan | undefined => {
  const span = spanOf(draft, key);
  if (!span || !draft.traceId) return undefined;
  draft.open = removeIn(draft.open, key);
  const startMs = span.startMs ?? Math.min(span.proposedAt, at);
  const redact = options.redact;
  const finished: GenAiSpan = {
    traceId: draft.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: redact(span.name),
    kind: span.kind,
    startMs,
    endMs: Math.max(at, startMs),
    attributes: resolveAttributes(span.patches, options.attributes, redact),
    events: toArray(span.events).map((event) => ({ name: event.name, at: event.at, attributes: redactEventAttributes(event.attributes, redact) })),
    droppedEvents: span.droppedEvents,
    links: span.links,
    status: options.status.message === undefined ? options.status : { code: options.status.code, message: redact(options.status.message) },
  };
  draft.ended = draft.ended.length === 0 ? [finished] : [...draft.ended, finished];
  return finished;
};

/**
 * End every open call of `agent` (its model and tool calls) at `at`: a call still open when its agent ends never
 * settled, and says so (`rein.unsettled`, `error.type` = `reason`).
 */
export const closeCallsOf = (draft: SpanDraft, agent: string, at: number, reason: string, redact: (text: string) => string): void => {
  for (const span of valuesOf(draft.open)) {
    if (span.agent !== agent || span.key.startsWith('agent:')) continue;
    closeSpan(draft, span.key, at, { status: { code: 'error' }, attributes: { [reinAttr.unsettled]: true, 'error.type': reason }, redact });
  }
  if (draft.approvals.size === 0) return;
  for (const [approvalId, key] of [...entriesOf(draft.approvals)]) if (!spanOf(draft, key)) draft.approvals = removeIn(draft.approvals, approvalId);
};
