import type { RecordEnvelope } from '../../models/envelope.js';
import { attr, operation, reinAttr } from '../telemetry/gen-ai-attributes.js';
import { spanIdOf, type SpanSubject } from '../telemetry/span-ids.js';
import type { GenAiSpan } from '../telemetry/span-types.js';
import { getIn, setIn, valuesOf } from './persistent-map.js';
import { prepend } from './persistent-list.js';
import { callIdOf } from './call-id.js';
import { agentPathOf, chatName, parentAgentOf, serverOf, type Attributes } from './span-attributes.js';
import { closeCallsOf, closeSpan, putSpan, spanOf, touch, updateSpan, withEvent, type OpenSpan, type SpanDraft } from './span-state.js';

/** What the span tree needs of the projection's options. */
export interface SpanTreeOptions {
  /** The root agent's `gen_ai.agent.name`. */
  agentName: string;
  /** Applied to every attribute of a span when it ends. */
  redact: (text: string) => string;
}

/** The span tree's operations, as `spanTree` returns them. */
export type SpanTree = ReturnType<typeof spanTree>;

/**
 * How the span projection keeps its tree of open spans on a draft: open a span; find or open an agent's span (under
 * its parent agent) or a model call's (under its agent); add an event to an agent, the root or a tool call (a record
 * that names no open span counts as unlinked); and end a model call, or an agent with its open calls and child agents
 * (deepest first, unsettled), or the session. Span ids are digests of the stream and the log's own ids.
 */
export const spanTree = ({ agentName, redact }: SpanTreeOptions) => {
  const idOf = (draft: SpanDraft, subject: SpanSubject, key: string): string => spanIdOf(draft.stream!, subject, key);
  const common = (draft: SpanDraft): Attributes => ({ [attr.conversationId]: draft.sessionId });

  const openSpan = (draft: SpanDraft, span: { key: string; spanId: string; parentSpanId?: string | undefined; agent: string; name: string; kind: OpenSpan['kind']; startMs?: number; proposedAt: number; attributes: Attributes }): void => {
    putSpan(draft, {
      key: span.key,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      agent: span.agent,
      name: span.name,
      kind: span.kind,
      startMs: span.startMs,
      proposedAt: span.proposedAt,
      patches: prepend(undefined, span.attributes),
      attempts: 0,
      events: undefined,
      droppedEvents: 0,
      links: [],
    });
  };

  /** The open span of agent `path`, opened on first sight unless it already ended; undefined when it did. */
  const ensureAgent = (draft: SpanDraft, path: string, at: number): string | undefined => {
    const key = `agent:${path}`;
    if (spanOf(draft, key)) return key;
    if (getIn(draft.closedAgents, path)) return undefined;
    const parent = parentAgentOf(path);
    openSpan(draft, {
      key,
      spanId: idOf(draft, 'agent', path),
      ...(parent ? { parentSpanId: idOf(draft, 'agent', parent) } : {}),
      agent: path,
      name: `${operation.invokeAgent} ${path === 'root' ? agentName : 'agent'}`,
      kind: 'internal',
      startMs: at,
      proposedAt: at,
      attributes: { [attr.operationName]: operation.invokeAgent, [attr.agentName]: path === 'root' ? agentName : 'agent', [attr.agentId]: path, ...common(draft) },
    });
    return key;
  };

  const agentEvent = (draft: SpanDraft, path: string, at: number, name: string, attributes: Attributes): void => {
    const key = ensureAgent(draft, path, at);
    if (!key || !updateSpan(draft, key, (span) => withEvent(span, name, at, attributes))) draft.unlinked++;
  };

  const rootEvent = (draft: SpanDraft, at: number, name: string, attributes: Attributes): void => {
    if (!updateSpan(draft, 'agent:root', (span) => withEvent(span, name, at, attributes))) draft.unlinked++;
  };

  const ensureChat = (draft: SpanDraft, record: RecordEnvelope, effectId: string): string | undefined => {
    const key = `chat:${effectId}`;
    if (spanOf(draft, key)) return key;
    const agent = agentPathOf(record.actor);
    const agentKey = ensureAgent(draft, agent, record.at);
    if (!agentKey) return undefined;
    openSpan(draft, {
      key,
      spanId: idOf(draft, 'chat', effectId),
      parentSpanId: spanOf(draft, agentKey)!.spanId,
      agent,
      name: chatName(draft.provider?.model ?? draft.provider?.name),
      kind: 'client',
      startMs: record.at,
      proposedAt: record.at,
      attributes: {
        [attr.operationName]: operation.chat,
        [attr.providerName]: draft.provider?.name,
        [attr.requestModel]: draft.provider?.model,
        ...serverOf(draft.provider?.source),
        ...common(draft),
        [reinAttr.actor]: agent,
        [reinAttr.effectId]: effectId,
      },
    });
    return key;
  };

  const closeChat = (draft: SpanDraft, key: string, at: number, status: GenAiSpan['status'], attributes: Attributes): void => {
    closeSpan(draft, key, at, { status, attributes, redact });
  };

  const toolKeyOf = (draft: SpanDraft, record: RecordEnvelope): string | undefined => {
    const callId = callIdOf(record);
    const key = callId === undefined ? undefined : `tool:${callId}`;
    if (key && spanOf(draft, key)) return key;
    draft.unlinked++;
    return undefined;
  };

  /** A record of a tool call: widen its span's start to the record's time, and add the event, if any. */
  const toolFact = (draft: SpanDraft, record: RecordEnvelope, event?: { name: string; attributes: Attributes }): void => {
    const key = toolKeyOf(draft, record);
    if (!key) return;
    updateSpan(draft, key, (span) => {
      const touched = touch(span, record.at);
      return event ? withEvent(touched, event.name, record.at, event.attributes) : touched;
    });
  };

  const markClosed = (draft: SpanDraft, path: string): void => {
    draft.closedAgents = setIn(draft.closedAgents, path, true);
  };

  const closeAgent = (draft: SpanDraft, path: string, at: number, status: GenAiSpan['status'], attributes: Attributes, reason: string): void => {
    if (!spanOf(draft, `agent:${path}`)) return;
    // An agent that ends stops its own children too: they end with it, deepest first, unsettled.
    const descendants = valuesOf(draft.open)
      .filter((span) => span.key.startsWith('agent:') && span.agent.startsWith(`${path}/`))
      .sort((a, b) => b.agent.length - a.agent.length || (a.agent < b.agent ? -1 : 1));
    for (const child of descendants) {
      closeCallsOf(draft, child.agent, at, reason, redact);
      closeSpan(draft, child.key, at, { status: { code: 'error' }, attributes: { [reinAttr.unsettled]: true, [attr.errorType]: reason }, redact });
      markClosed(draft, child.agent);
    }
    closeCallsOf(draft, path, at, reason, redact);
    closeSpan(draft, `agent:${path}`, at, { status, attributes, redact });
    markClosed(draft, path);
  };

  /** The root ended: every call and child agent still open ends with it (unsettled), then the root. */
  const closeSession = (draft: SpanDraft, at: number, status: GenAiSpan['status'], attributes: Attributes, reason: string): void => {
    closeAgent(draft, 'root', at, status, attributes, reason);
    draft.rootEnded = true;
  };

  return { idOf, common, openSpan, agentEvent, rootEvent, ensureChat, closeChat, toolKeyOf, toolFact, closeAgent, closeSession };
};
