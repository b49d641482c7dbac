import type { RecordEnvelope } from '../../models/envelope.js';
import type { ContextProjected } from '../../models/context.records.js';
import type { DelegationAccepted, DelegationCompleted, DelegationFailed, DelegationJoined, DelegationPermissionEscalated, DelegationStarted, ReportRejected } from '../../models/delegation.records.js';
import type { EffectFailed, EffectResolved } from '../../models/effect.records.js';
import type { ModelAttempted, ModelFailed, ModelResponded } from '../../models/model.records.js';
import type { ApprovalReplied, ApprovalRequested, PermissionDecided } from '../../models/permission.records.js';
import type { SessionCreated, SessionEnded, SessionForked, SessionInterrupted, SessionResumed } from '../../models/session.records.js';
import type { ToolRejected, ToolRepaired, ToolSettled, ToolValidated } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { executionFailure } from '../../models/execution-outcome.js';
import { attr, operation, reinAttr } from '../telemetry/gen-ai-attributes.js';
import { createRedactor } from '../telemetry/redact.js';
import { spanIdOf, traceIdOf, type SpanSubject } from '../telemetry/span-ids.js';
import type { GenAiSpan, SpanAttributeValue } from '../telemetry/span-types.js';
import { getIn, removeIn, setIn, valuesOf } from './persistent-map.js';
import { prepend } from './persistent-list.js';
import { reducerOf, type Projection } from './projection.js';
import {
  closeCallsOf,
  closeSpan,
  draftOf,
  initialSpanView,
  putSpan,
  removed,
  spanOf,
  spanWith,
  touch,
  updateSpan,
  withAttributes,
  withEvent,
  type OpenSpan,
  type SpanDraft,
  type SpanView,
} from './span-state.js';

export type { OpenSpan, SpanView } from './span-state.js';

/**
 * The span projection, and which record types it reads: for any other record `apply` changes nothing but `seq` and
 * the latest record time, so a live follower may skip it.
 */
export interface SpanProjection extends Projection<SpanView> {
  handles(type: string): boolean;
}

/** What the span view records and how (README: *OpenTelemetry*). */
export interface SpanViewOptions {
  /**
   * Record content: the task and user messages, model replies and tool calls, tool arguments and results,
   * permission reasons, approval feedback, verification commands and summaries, error messages. Off by default:
   * spans then carry names, ids, models, counts, codes and statuses only.
   */
  captureContent?: boolean;
  /** Strings no exported value may contain (API keys, tokens): every occurrence becomes `[redacted]`. */
  secrets?: readonly string[];
  /** The root agent's `gen_ai.agent.name` (default `rein`); child agents are named by their role. */
  agentName?: string;
  /** Content values longer than this many characters are cut (default 16,000). */
  maxContentLength?: number;
}

type Attributes = Record<string, SpanAttributeValue | undefined>;

const agentPathOf = (actor: string): string => actor.replace(/\/turn-\d+$/, '');

/** The agent a child agent's path hangs under when its `delegation.started` is missing: `root/delegation-2/map` → `root`. */
const parentAgentOf = (path: string): string | undefined => {
  if (path === 'root') return undefined;
  const at = path.lastIndexOf('/delegation-');
  return at > 0 ? path.slice(0, at) : 'root';
};

const chatName = (model: string | undefined): string => (model ? `${operation.chat} ${model}` : operation.chat);

const callIdOf = (record: RecordEnvelope): string | undefined => record.corr ?? ((record.data as { callId?: unknown }).callId as string | undefined);

/** `server.address` / `server.port` of a provider endpoint recorded as a URL (scripts and custom sources have none). */
const serverOf = (source: string | undefined): Attributes => {
  if (!source || !/^https?:\/\//i.test(source)) return {};
  try {
    const url = new URL(source);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { [attr.serverAddress]: url.hostname.replace(/^\[|\]$/g, ''), [attr.serverPort]: port };
  } catch {
    return {};
  }
};

/**
 * The telemetry projection: records → OpenTelemetry GenAI spans. The session is `invoke_agent <name>` (internal),
 * each model call `chat <model>` (client), each tool call `execute_tool <tool>` (internal), each child agent a
 * nested `invoke_agent <role>` under the `delegate_task` call that started it. Span times come from record times;
 * trace and span ids are digests of the stream and the log's own ids (actor path, effect id, call id), so every
 * export of a stream agrees. Per record it touches a bounded number of open spans (persistent maps), so its cost
 * does not grow with the session; `ended` holds the spans the last record finished, for a live exporter.
 */
export const spanProjection = (options: SpanViewOptions = {}): SpanProjection => {
  const capture = options.captureContent === true;
  const redact = createRedactor(options.secrets);
  const agentName = options.agentName ?? 'rein';
  const maxContent = options.maxContentLength ?? 16_000;
  const clip = (text: string): string => (text.length <= maxContent ? text : `${text.slice(0, maxContent)}… [${text.length - maxContent} more characters]`);
  /** A content value: only when content is captured. */
  const content = (value: unknown): string | undefined => {
    if (!capture || value === undefined) return undefined;
    return clip(typeof value === 'string' ? value : JSON.stringify(value));
  };

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

  /** Where a provider recorded in `session.created` (the primary or a fallback) serves from. */
  const sourceOf = (draft: SpanDraft, provider: string, model: string | undefined): string | undefined => {
    const chain = draft.provider ? [draft.provider, ...(draft.provider.fallbacks ?? [])] : [];
    return (chain.find((entry) => entry.name === provider && (model === undefined || entry.model === model)) ?? chain.find((entry) => entry.name === provider))?.source;
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

  const handlers: Record<string, (draft: SpanDraft, record: RecordEnvelope) => void> = {
    'session.created': (draft, record) => {
      const created = record.data as SessionCreated;
      // The stream is the session (a fork's copied `session.created` names its parent, linked by `session.forked`).
      draft.sessionId = record.stream;
      draft.provider = created.provider;
      if (record.actor !== 'root' || spanOf(draft, 'agent:root')) return;
      openSpan(draft, {
        key: 'agent:root',
        spanId: idOf(draft, 'agent', 'root'),
        agent: 'root',
        name: `${operation.invokeAgent} ${agentName}`,
        kind: 'internal',
        startMs: record.at,
        proposedAt: record.at,
        attributes: {
          [attr.operationName]: operation.invokeAgent,
          [attr.agentName]: agentName,
          [attr.agentId]: 'root',
          ...common(draft),
          [reinAttr.sessionId]: record.stream,
          [attr.providerName]: created.provider.name,
          [attr.requestModel]: created.provider.model,
          [attr.inputMessages]: content([{ role: 'user', parts: [{ type: 'text', content: created.task }] }]),
        },
      });
    },
    'user.message': (draft, record) => {
      const text = String((record.data as { text?: unknown }).text ?? '');
      agentEvent(draft, agentPathOf(record.actor), record.at, 'rein.user.message', { [reinAttr.chars]: text.length, [reinAttr.text]: content(text) });
    },
    'effect.requested': (draft, record) => {
      // A model call's span opens when it is requested, so a call that never answered still has its span.
      const requested = record.data as { effectId?: unknown; kind?: unknown };
      if (requested.kind === 'callModel' && typeof requested.effectId === 'string') ensureChat(draft, record, requested.effectId);
    },
    'context.projected': (draft, record) => {
      const projected = record.data as ContextProjected;
      const key = ensureChat(draft, record, projected.effectId);
      if (!key) return;
      updateSpan(draft, key, (span) =>
        withAttributes(span, {
          [reinAttr.turn]: projected.turn,
          [reinAttr.contextInput]: projected.input,
          [reinAttr.contextTokens]: projected.estimatedTokens,
          [reinAttr.contextPhase]: projected.phase,
          [reinAttr.contextExcluded]: projected.excluded.reduce((sum, entry) => sum + entry.count, 0),
          [reinAttr.contextCompacted]: projected.compacted.length,
        }),
      );
    },
    'model.attempted': (draft, record) => {
      const attempted = record.data as ModelAttempted;
      const key = ensureChat(draft, record, attempted.effectId);
      if (!key) return;
      updateSpan(draft, key, (span) => {
        const first = attempted.attempt === 1 || span.attempts === 0;
        const started = touch(span, record.at - attempted.durationMs);
        // The endpoint is the answering provider's: a fallback to a provider without a URL leaves none.
        const server = serverOf(sourceOf(draft, attempted.provider, attempted.model));
        const updated = spanWith(withAttributes(started, {
          [attr.providerName]: attempted.provider,
          [reinAttr.attempts]: Math.max(attempted.attempt, span.attempts),
          ...(first && attempted.model ? { [attr.requestModel]: attempted.model } : {}),
          ...(attempted.outcome === 'ok' && attempted.model ? { [attr.responseModel]: attempted.model } : {}),
          [attr.serverAddress]: server[attr.serverAddress] ?? removed,
          [attr.serverPort]: server[attr.serverPort] ?? removed,
        }), { attempts: Math.max(attempted.attempt, span.attempts), ...(first && attempted.model ? { name: chatName(attempted.model) } : {}) });
        if (attempted.decision === 'done') return updated;
        return withEvent(updated, `rein.model.${attempted.decision}`, record.at, {
          [reinAttr.attempt]: attempted.attempt,
          [attr.providerName]: attempted.provider,
          [attr.requestModel]: attempted.model,
          [attr.errorType]: attempted.errorCode,
          [reinAttr.delayMs]: attempted.delayMs,
          [reinAttr.fallbackProvider]: attempted.fallbackTo?.provider,
          [reinAttr.fallbackModel]: attempted.fallbackTo?.model,
          [reinAttr.reason]: content(attempted.message),
        });
      });
    },
    'model.responded': (draft, record) => {
      const reply = record.data as ModelResponded;
      const key = ensureChat(draft, record, reply.effectId);
      if (!key) return;
      const agent = agentPathOf(record.actor);
      const parts = capture
        ? [
            ...(reply.reasoning ? [{ type: 'reasoning', content: reply.reasoning }] : []),
            ...(reply.text ? [{ type: 'text', content: reply.text }] : []),
            ...reply.toolCalls.map((call) => ({ type: 'tool_call', id: call.callId, name: call.name, arguments: call.arguments })),
          ]
        : [];
      closeChat(draft, key, record.at, { code: 'unset' }, {
        [reinAttr.turn]: reply.turn,
        [attr.inputTokens]: reply.usage.inputTokens,
        [attr.outputTokens]: reply.usage.outputTokens,
        [attr.finishReasons]: [reply.stopReason],
        [reinAttr.toolCalls]: reply.toolCalls.length,
        [attr.outputMessages]: content([{ role: 'assistant', parts, finish_reason: reply.stopReason }]),
      });
      const agentSpan = spanOf(draft, `agent:${agent}`);
      if (!agentSpan) return;
      for (const call of reply.toolCalls) {
        if (spanOf(draft, `tool:${call.callId}`)) continue;
        openSpan(draft, {
          key: `tool:${call.callId}`,
          spanId: idOf(draft, 'tool', call.callId),
          parentSpanId: agentSpan.spanId,
          agent,
          name: `${operation.executeTool} ${call.name}`,
          kind: 'internal',
          proposedAt: record.at,
          attributes: {
            [attr.operationName]: operation.executeTool,
            [attr.toolName]: call.name,
            [attr.toolCallId]: call.callId,
            [attr.toolType]: 'function',
            [reinAttr.mcpServer]: /^mcp__(.+?)__./.exec(call.name)?.[1],
            ...common(draft),
            [reinAttr.actor]: agent,
            [attr.toolCallArguments]: content(call.arguments),
          },
        });
      }
    },
    'model.failed': (draft, record) => {
      const failed = record.data as ModelFailed;
      const key = ensureChat(draft, record, failed.effectId);
      if (key) closeChat(draft, key, record.at, { code: 'error', ...(capture ? { message: clip(failed.error.message) } : {}) }, { [reinAttr.turn]: failed.turn, [attr.errorType]: failed.error.code });
    },
    'effect.failed': (draft, record) => {
      const failed = record.data as EffectFailed;
      const status = { code: 'error' as const, ...(capture ? { message: clip(failed.error.message) } : {}) };
      if (spanOf(draft, `chat:${failed.effectId}`)) return closeChat(draft, `chat:${failed.effectId}`, record.at, status, { [attr.errorType]: failed.error.code });
      const key = toolKeyOf(draft, record);
      if (key) closeSpan(draft, key, record.at, { status, attributes: { [attr.errorType]: failed.error.code, [reinAttr.toolStatus]: 'error' }, redact });
    },
    'tool.repaired': (draft, record) => {
      const repaired = record.data as ToolRepaired;
      toolFact(draft, record, { name: 'rein.tool.repaired', attributes: { [reinAttr.repairs]: repaired.repairs.map((repair) => ('from' in repair ? `${repair.from}->${repair.to}` : `${repair.field}:${repair.kind}`)) } });
    },
    'tool.validated': (draft, record) => {
      const validated = record.data as ToolValidated;
      toolFact(draft, record, validated.ok ? undefined : { name: 'rein.tool.invalid', attributes: { [reinAttr.issues]: (validated.issues ?? []).map((issue) => `${issue.path}:${issue.code}`) } });
    },
    'tool.rejected': (draft, record) => {
      const rejected = record.data as ToolRejected;
      toolFact(draft, record, { name: 'rein.tool.rejected', attributes: { [reinAttr.stage]: rejected.stage, [reinAttr.code]: rejected.code, [attr.errorType]: rejected.errorCode, [reinAttr.reason]: content(rejected.message) } });
    },
    'permission.decided': (draft, record) => {
      const decided = record.data as PermissionDecided;
      toolFact(draft, record, {
        name: 'rein.permission.decided',
        attributes: {
          [reinAttr.decisionValue]: decided.decision,
          [reinAttr.source]: decided.source,
          [reinAttr.rule]: decided.rule ?? undefined,
          [reinAttr.mode]: decided.mode,
          [reinAttr.classes]: decided.classes && decided.classes.length > 0 ? decided.classes : undefined,
          [reinAttr.reason]: content(decided.reason),
        },
      });
    },
    'approval.requested': (draft, record) => {
      const requested = record.data as ApprovalRequested;
      toolFact(draft, record, { name: 'rein.approval.requested', attributes: { [reinAttr.approvalId]: requested.approvalId, [reinAttr.classes]: requested.classes && requested.classes.length > 0 ? requested.classes : undefined, [reinAttr.reason]: content(requested.reason) } });
      const key = `tool:${requested.callId}`;
      if (spanOf(draft, key)) draft.approvals = setIn(draft.approvals, requested.approvalId, key);
    },
    'approval.replied': (draft, record) => {
      const replied = record.data as ApprovalReplied;
      const key = getIn(draft.approvals, replied.approvalId);
      draft.approvals = removeIn(draft.approvals, replied.approvalId);
      if (!key || !updateSpan(draft, key, (span) => withEvent(span, 'rein.approval.replied', record.at, { [reinAttr.approvalId]: replied.approvalId, [reinAttr.approvalDecision]: replied.decision, [reinAttr.feedback]: content(replied.feedback) }))) draft.unlinked++;
    },
    'tool.started': (draft, record) => toolFact(draft, record, { name: 'rein.tool.started', attributes: {} }),
    'file.read': (draft, record) => toolFact(draft, record),
    'file.written': (draft, record) => toolFact(draft, record),
    'verification.recorded': (draft, record) => {
      const verified = record.data as VerificationRecorded;
      const attributes: Attributes = {
        [reinAttr.verificationName]: verified.name,
        [reinAttr.verificationStatus]: verified.status,
        [attr.errorType]: verified.errorCode,
        [reinAttr.exitCode]: verified.exitCode ?? undefined,
        [reinAttr.signal]: verified.signal,
        [reinAttr.timedOut]: verified.timedOut,
        [reinAttr.command]: content(verified.command),
        [reinAttr.summary]: content(verified.summary),
      };
      const key = verified.callId ? `tool:${verified.callId}` : undefined;
      if (key && updateSpan(draft, key, (span) => withEvent(touch(span, record.at), 'rein.verification', record.at, attributes))) return;
      agentEvent(draft, agentPathOf(record.actor), record.at, 'rein.verification', attributes);
    },
    'tool.settled': (draft, record) => {
      const settled = record.data as ToolSettled;
      const key = toolKeyOf(draft, record);
      if (!key) return;
      updateSpan(draft, key, (span) => touch(span, record.at));
      // A command is judged by how it ran whatever the call's status, as `rein show` and `rein trace` judge it.
      const ranBadly = settled.execution ? executionFailure(settled.execution) : undefined;
      const failure = settled.status === 'error' ? (settled.errorCode ?? 'error') : ranBadly;
      closeSpan(draft, key, record.at, {
        status: failure === undefined ? { code: 'unset' } : { code: 'error' },
        attributes: {
          [reinAttr.toolStatus]: settled.status,
          [attr.errorType]: failure,
          [attr.processExitCode]: settled.execution?.exitCode ?? undefined,
          [reinAttr.toolSignal]: settled.execution?.signal,
          [reinAttr.toolTimedOut]: settled.execution?.timedOut,
          [reinAttr.failedStage]: settled.failedStage,
          [reinAttr.omittedBytes]: settled.truncated?.omittedBytes,
          [attr.toolCallResult]: content(settled.observation),
        },
        redact,
      });
    },
    'delegation.accepted': (draft, record) => {
      const accepted = record.data as DelegationAccepted;
      toolFact(draft, record, { name: 'rein.delegation.accepted', attributes: { [reinAttr.tasks]: accepted.plan.tasks.length, [reinAttr.joinPolicy]: accepted.plan.join.policy, [reinAttr.joinK]: accepted.plan.join.k } });
    },
    'delegation.started': (draft, record) => {
      const started = record.data as DelegationStarted;
      if (getIn(draft.closedAgents, started.child)) return;
      const attributes: Attributes = {
        [attr.operationName]: operation.invokeAgent,
        [attr.agentName]: started.task.role,
        [attr.agentId]: started.child,
        ...common(draft),
        [reinAttr.taskId]: started.taskId,
        [reinAttr.role]: started.task.role,
        [reinAttr.depth]: started.task.depth,
        [attr.agentDescription]: content(started.task.title),
        [attr.inputMessages]: content([{ role: 'user', parts: [{ type: 'text', content: started.task.objective }] }]),
      };
      const parentSpanId = idOf(draft, 'tool', started.callId);
      const name = `${operation.invokeAgent} ${started.task.role}`;
      // The child's first records may come before this one (its model call is requested in the same step).
      if (!updateSpan(draft, `agent:${started.child}`, (span) => spanWith(withAttributes(touch(span, record.at), attributes), { parentSpanId, name }))) {
        openSpan(draft, { key: `agent:${started.child}`, spanId: idOf(draft, 'agent', started.child), parentSpanId, agent: started.child, name, kind: 'internal', startMs: record.at, proposedAt: record.at, attributes });
      }
      const key = `tool:${started.callId}`;
      if (!updateSpan(draft, key, (span) => withEvent(span, 'rein.delegation.started', record.at, { [reinAttr.taskId]: started.taskId, [attr.agentId]: started.child }))) draft.unlinked++;
    },
    'delegation.permission-escalated': (draft, record) => {
      const escalated = record.data as DelegationPermissionEscalated;
      agentEvent(draft, escalated.child, record.at, 'rein.delegation.escalated', { [reinAttr.approvalId]: escalated.approvalId, [attr.toolName]: escalated.tool, [reinAttr.reason]: content(escalated.reason) });
    },
    'delegation.completed': (draft, record) => {
      const completed = record.data as DelegationCompleted;
      closeAgent(draft, completed.child, record.at, { code: 'unset' }, { [reinAttr.reportStatus]: completed.reportStatus, [attr.inputTokens]: completed.usage.inputTokens, [attr.outputTokens]: completed.usage.outputTokens }, 'unsettled');
    },
    'delegation.failed': (draft, record) => {
      const failed = record.data as DelegationFailed;
      closeAgent(
        draft,
        failed.child,
        record.at,
        { code: 'error', ...(capture ? { message: clip(failed.reason) } : {}) },
        { [attr.errorType]: failed.cancelled ? 'cancelled' : failed.failureClass, [reinAttr.failureClass]: failed.failureClass, [attr.inputTokens]: failed.usage?.inputTokens, [attr.outputTokens]: failed.usage?.outputTokens },
        'cancelled',
      );
    },
    'delegation.joined': (draft, record) => {
      const joined = record.data as DelegationJoined;
      const key = `tool:${joined.callId}`;
      if (!spanOf(draft, key)) return void draft.unlinked++;
      updateSpan(draft, key, (span) => touch(span, record.at));
      closeSpan(draft, key, record.at, {
        status: joined.outcome === 'satisfied' ? { code: 'unset' } : { code: 'error' },
        attributes: {
          [reinAttr.toolStatus]: joined.outcome === 'satisfied' ? 'ok' : 'error',
          [attr.errorType]: joined.outcome === 'satisfied' ? undefined : joined.outcome === 'cancelled' ? 'cancelled' : 'join_unsatisfied',
          [reinAttr.joinPolicy]: joined.policy,
          [reinAttr.joinK]: joined.k,
          [reinAttr.joinOutcome]: joined.outcome,
          [reinAttr.joinChildren]: joined.children.length,
          [reinAttr.joinConflicts]: joined.conflicts.length,
          [attr.toolCallResult]: content(joined.observation),
        },
        redact,
      });
    },
    'report.rejected': (draft, record) => {
      const rejected = record.data as ReportRejected;
      agentEvent(draft, agentPathOf(record.actor), record.at, 'rein.report.rejected', { [reinAttr.reason]: rejected.reason, [reinAttr.attempt]: rejected.attempt, [reinAttr.failureClass]: 'contract', 'rein.report.format': rejected.format, 'rein.report.final': rejected.final });
    },
    'turn.blocked': (draft, record) => {
      const blocked = record.data as { turnId: string; stage: string; findings: ReadonlyArray<{ class: string }> };
      agentEvent(draft, agentPathOf(record.actor), record.at, 'rein.typestate.blocked', { [reinAttr.turnId]: blocked.turnId, [reinAttr.stage]: blocked.stage, [reinAttr.findings]: blocked.findings.map((finding) => finding.class) });
    },
    'session.cancelled': (draft, record) => {
      draft.cancelled = true;
      rootEvent(draft, record.at, 'rein.session.cancelled', { [reinAttr.reason]: content((record.data as { reason?: unknown }).reason) });
    },
    'session.interrupted': (draft, record) => {
      const interrupted = record.data as SessionInterrupted;
      rootEvent(draft, record.at, 'rein.session.interrupted', { [reinAttr.running]: interrupted.running.length, [reinAttr.reason]: content(interrupted.reason) });
    },
    'session.resumed': (draft, record) => {
      const resumed = record.data as SessionResumed;
      rootEvent(draft, record.at, 'rein.session.resumed', { [reinAttr.fromSeq]: resumed.fromSeq, [reinAttr.inDoubt]: resumed.inDoubt.length });
    },
    'effect.resolved': (draft, record) => {
      const resolved = record.data as EffectResolved;
      rootEvent(draft, record.at, 'rein.effect.resolved', { [reinAttr.effectId]: resolved.effectId, [reinAttr.kind]: resolved.kind, [reinAttr.policy]: resolved.policy, [reinAttr.resolution]: resolved.resolution, [reinAttr.reason]: content(resolved.reason) });
    },
    'session.forked': (draft, record) => {
      const forked = record.data as SessionForked;
      const link = { traceId: traceIdOf(forked.parent), spanId: spanIdOf(forked.parent, 'agent', 'root'), attributes: { [reinAttr.forkParent]: forked.parent, [reinAttr.forkAt]: forked.atSeq } };
      if (!updateSpan(draft, 'agent:root', (span) => withEvent(spanWith(span, { links: [...span.links, link] }), 'rein.session.forked', record.at, link.attributes))) draft.unlinked++;
    },
    'session.ended': (draft, record) => {
      const ended = record.data as SessionEnded;
      const failed = ended.status === 'failed' || ended.status === 'budget-exhausted';
      const status = failed ? { code: 'error' as const, ...(capture && ended.reason ? { message: clip(ended.reason) } : {}) } : { code: 'unset' as const };
      const attributes: Attributes = {
        [reinAttr.outcome]: ended.status,
        [attr.errorType]: failed ? ended.status : undefined,
        [reinAttr.reason]: content(ended.reason),
        // A final answer after a blocked turn: the fail-closed findings nothing resolved (its claim rests on no MutationReady turn).
        [reinAttr.unresolved]: ended.unresolved ? ended.unresolved.findings.map((finding) => finding.class) : undefined,
      };
      const reason = draft.cancelled || ended.status === 'cancelled' ? 'cancelled' : 'unsettled';
      if (record.actor === 'root') closeSession(draft, record.at, status, attributes, reason);
      else closeAgent(draft, record.actor, record.at, status, attributes, reason);
    },
  };

  return {
    name: 'spans',
    handles: (type) => Object.hasOwn(handlers, type),
    initial: initialSpanView,
    apply(view, record) {
      const handler = view.rootEnded ? undefined : handlers[record.type];
      const draft = draftOf(view, record.seq, view.lastAt >= record.at ? view.lastAt : record.at);
      if (!draft.stream) {
        draft.stream = record.stream;
        draft.traceId = traceIdOf(record.stream);
      }
      handler?.(draft, record);
      return draft;
    },
  };
};

/**
 * End every span still open (a session that has not ended, or is waiting for a person) at the latest record time:
 * status unset, `rein.open` true. For exporting an unfinished session from the log; a live export never calls it.
 */
export const finishOpenSpans = (view: SpanView, options: Pick<SpanViewOptions, 'secrets'> = {}): GenAiSpan[] => {
  const redact = createRedactor(options.secrets);
  const draft = draftOf(view, view.seq, view.lastAt);
  const open = valuesOf(view.open).sort((a, b) => Number(a.key.startsWith('agent:')) - Number(b.key.startsWith('agent:')) || b.agent.length - a.agent.length);
  for (const span of open) closeSpan(draft, span.key, view.lastAt, { status: { code: 'unset' }, attributes: { [reinAttr.open]: true }, redact });
  return [...draft.ended];
};

/**
 * Every span of a session's records, in the order they ended, with the spans still open at the end finished by
 * `finishOpenSpans`: what an export from the log sends. A live export of the same records sends the same spans
 * (the open ones excepted).
 */
export const spansOfRecords = (records: Iterable<RecordEnvelope>, options: SpanViewOptions = {}): GenAiSpan[] => {
  const projection = spanProjection(options);
  const reduce = reducerOf(projection);
  let view = projection.initial();
  const spans: GenAiSpan[] = [];
  for (const record of records) {
    const next = reduce(view, record);
    if (next !== view) spans.push(...next.ended);
    view = next;
  }
  spans.push(...finishOpenSpans(view, options));
  return spans;
};
