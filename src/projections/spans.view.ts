import type { RecordEnvelope } from '../../models/envelope.js';
import type { ContextProjected } from '../../models/context.records.js';
import type { DelegationAccepted, DelegationCompleted, DelegationFailed, DelegationJoined, DelegationPermissionEscalated, DelegationStarted, ReportRejected } from '../../models/delegation.records.js';
import type { EffectFailed, EffectResolved } from '../../models/effect.records.js';
import type { ModelAttempted, ModelFailed, ModelResponded } from '../../models/model.records.js';
import type { ApprovalReplied, ApprovalRequested, PermissionDecided } from '../../models/permission.records.js';
import type { BudgetsRaised, SessionCreated, SessionEnded, SessionForked, SessionInterrupted, SessionResumed } from '../../models/session.records.js';
import type { ToolRejected, ToolRepaired, ToolSettled, ToolValidated } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { callPrice, costOfUsage } from './cost.js';
import { defaultPrices, type Prices } from '../../models/price-table.js';
import { attr, operation, reinAttr } from '../telemetry/gen-ai-attributes.js';
import { createRedactor } from '../telemetry/redact.js';
import { spanIdOf, traceIdOf } from '../telemetry/span-ids.js';
import type { GenAiSpan } from '../telemetry/span-types.js';
import { getIn, removeIn, setIn, valuesOf } from './persistent-map.js';
import { reducerOf, type Projection } from './projection.js';
import { recordClassOf } from '../../models/records.js';
import { derivedViewsOf, entriesOf, factViewsOf } from '../host/step-record.js';
import {
  agentPathOf,
  attemptEventAttributes,
  chatName,
  childAgentAttributes,
  contextAttributes,
  endedAttributes,
  inputAttributes,
  type ModelInputContent,
  joinedOutcome,
  permissionAttributes,
  responseAttributes,
  rootAgentAttributes,
  serverOf,
  settledOutcome,
  sourceOf,
  toolCallAttributes,
  verificationAttributes,
} from './span-attributes.js';
import { closeSpan, draftOf, initialSpanView, removed, spanOf, spanWith, touch, updateSpan, withAttributes, withEvent, type SpanDraft, type SpanView } from './span-state.js';
import { spanTree } from './span-tree.js';

export type { OpenSpan, SpanView } from './span-state.js';
export type { ModelInputContent } from './span-attributes.js';

/**
 * The span projection, and which record types it reads: for any other record `apply` changes nothing but `seq` and
 * the latest record time, so a live follower may skip it.
 */
export interface SpanProjection extends Projection<SpanView> {
  handles(type: string): boolean;
  /** The view with the input it still holds applied (see `SpanView.held`): what an export of a finished log reads last. */
  flush(view: SpanView): SpanView;
}

/** What the span view records and how (docs/telemetry.md). */
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
  /**
   * The model input a `context.projected` record names (its `input` blob ref), read beforehand from the blob store:
   * with content captured, each chat span then carries its prompt (`gen_ai.input.messages`,
   * `gen_ai.system_instructions`, `gen_ai.tool.definitions`). Live telemetry and `exportSessionSpans` read the blobs
   * themselves; give it to `spansOfRecords` / `otlpJsonOf` to get the same.
   */
  modelInputOf?: (ref: string) => ModelInputContent | undefined;
  /** Prices for each chat span's `rein.cost.usd` (default the shipped `defaultPrices`). */
  prices?: Prices;
}

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
  const prices = options.prices ?? defaultPrices;
  const redact = createRedactor(options.secrets);
  const agentName = options.agentName ?? 'rein';
  const maxContent = options.maxContentLength ?? 16_000;
  const clip = (text: string): string => (text.length <= maxContent ? text : `${text.slice(0, maxContent)}… [${text.length - maxContent} more characters]`);
  /** A content value: only when content is captured. */
  const content = (value: unknown): string | undefined => {
    if (!capture || value === undefined) return undefined;
    return clip(typeof value === 'string' ? value : JSON.stringify(value));
  };

  const { idOf, common, openSpan, agentEvent, rootEvent, ensureChat, closeChat, toolKeyOf, toolFact, closeAgent, closeSession } = spanTree({ agentName, redact });

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
        attributes: rootAgentAttributes(created, { agentName, conversation: common(draft), sessionId: record.stream, content }),
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
      const input = capture ? options.modelInputOf?.(projected.input) : undefined;
      updateSpan(draft, key, (span) => withAttributes(span, { ...contextAttributes(projected), ...(input ? inputAttributes(input, content) : {}) }));
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
        return withEvent(updated, `rein.model.${attempted.decision}`, record.at, attemptEventAttributes(attempted, content));
      });
    },
    'model.responded': (draft, record) => {
      const reply = record.data as ModelResponded;
      const key = ensureChat(draft, record, reply.effectId);
      if (!key) return;
      const agent = agentPathOf(record.actor);
      const price = callPrice(prices, draft.provider?.name, draft.provider?.model);
      closeChat(draft, key, record.at, { code: 'unset' }, responseAttributes(reply, capture, content, price ? costOfUsage(reply.usage, price) : undefined));
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
          attributes: toolCallAttributes(call, { agent, conversation: common(draft), content }),
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
      toolFact(draft, record, { name: 'rein.permission.decided', attributes: permissionAttributes(decided, content) });
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
      const attributes = verificationAttributes(verified, content);
      const key = verified.callId ? `tool:${verified.callId}` : undefined;
      if (key && updateSpan(draft, key, (span) => withEvent(touch(span, record.at), 'rein.verification', record.at, attributes))) return;
      agentEvent(draft, agentPathOf(record.actor), record.at, 'rein.verification', attributes);
    },
    'tool.settled': (draft, record) => {
      const settled = record.data as ToolSettled;
      const key = toolKeyOf(draft, record);
      if (!key) return;
      updateSpan(draft, key, (span) => touch(span, record.at));
      closeSpan(draft, key, record.at, { ...settledOutcome(settled, content), redact });
    },
    'delegation.accepted': (draft, record) => {
      const accepted = record.data as DelegationAccepted;
      toolFact(draft, record, { name: 'rein.delegation.accepted', attributes: { [reinAttr.tasks]: accepted.plan.tasks.length, [reinAttr.joinPolicy]: accepted.plan.join.policy, [reinAttr.joinK]: accepted.plan.join.k } });
    },
    'delegation.started': (draft, record) => {
      const started = record.data as DelegationStarted;
      if (getIn(draft.closedAgents, started.child)) return;
      const attributes = childAgentAttributes(started, common(draft), content);
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
      closeSpan(draft, key, record.at, { ...joinedOutcome(joined, content), redact });
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
    'session.budgets-raised': (draft, record) => {
      const raised = record.data as BudgetsRaised;
      const attributes = { [reinAttr.maxTurns]: raised.maxTurns, [reinAttr.maxToolCalls]: raised.maxToolCalls, [reinAttr.maxTokens]: raised.maxTokens, [reinAttr.maxWallTimeMs]: raised.maxWallTimeMs };
      if (draft.rootEnded) {
        // A spent budget ended the root's span; the raise continues the session: a continuation of the agent's span
        // opens under the ended one (same trace, one root), and the calls after the raise hang under it.
        draft.rootEnded = false;
        draft.closedAgents = removeIn(draft.closedAgents, 'root');
        openSpan(draft, {
          key: 'agent:root',
          spanId: idOf(draft, 'agent', `root@${record.seq}`),
          parentSpanId: idOf(draft, 'agent', 'root'),
          agent: 'root',
          name: `${operation.invokeAgent} ${agentName}`,
          kind: 'internal',
          startMs: record.at,
          proposedAt: record.at,
          attributes: { [attr.operationName]: operation.invokeAgent, [attr.agentName]: agentName, [attr.agentId]: 'root', ...common(draft) },
        });
      }
      rootEvent(draft, record.at, 'rein.session.budgets-raised', attributes);
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
      const attributes = endedAttributes(ended, failed, content);
      const reason = draft.cancelled || ended.status === 'cancelled' ? 'cancelled' : 'unsettled';
      if (record.actor === 'root') closeSession(draft, record.at, status, attributes, reason);
      else closeAgent(draft, record.actor, record.at, status, attributes, reason);
    },
  };

  const handle = (draft: SpanDraft, entries: readonly RecordEnvelope[]): SpanDraft => {
    for (const entry of entries) {
      // Past the root's end only a raised budget (which continues the session) is read.
      if (draft.rootEnded && entry.type !== 'session.budgets-raised') continue;
      if (entry.at > draft.lastAt) draft.lastAt = entry.at;
      handlers[entry.type]?.(draft, entry);
    }
    return draft;
  };

  return {
    name: 'spans',
    // Inputs are held for the step record after them (see `SpanView.held`), and step records release them.
    handles: (type) => Object.hasOwn(handlers, type) || type === 'step.derived' || recordClassOf(type) === 'input',
    initial: initialSpanView,
    apply(view, record) {
      const draft = draftOf(view, record.seq, view.lastAt >= record.at ? view.lastAt : record.at);
      if (!draft.stream) {
        draft.stream = record.stream;
        draft.traceId = traceIdOf(record.stream);
      }
      const held = view.held;
      // A step's facts (its model call's context and attempt, a read-only tool's start) came before its input.
      if (held && record.type === 'step.derived' && record.cause === held.id) return handle(draft, [...factViewsOf(record, held), held, ...derivedViewsOf(record)]);
      const entries = held ? [held] : [];
      if (recordClassOf(record.type) === 'input') draft.held = record;
      else entries.push(...entriesOf(record));
      return handle(draft, entries);
    },
    flush(view) {
      if (!view.held) return view;
      return handle(draftOf(view, view.seq, view.lastAt), [view.held]);
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
  const flushed = projection.flush(view);
  if (flushed !== view) spans.push(...flushed.ended);
  view = flushed;
  spans.push(...finishOpenSpans(view, options));
  return spans;
};
