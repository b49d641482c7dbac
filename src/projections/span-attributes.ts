import type { ContextProjected } from '../../models/context.records.js';
import type { DelegationJoined, DelegationStarted } from '../../models/delegation.records.js';
import type { ModelAttempted, ModelResponded, ToolCall } from '../../models/model.records.js';
import type { ModelMessage, ModelToolDescription } from '../../models/model-contract.js';
import type { PermissionDecided } from '../../models/permission.records.js';
import type { SessionCreated, SessionEnded } from '../../models/session.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { executionFailure } from '../../models/execution-outcome.js';
import { attr, operation, reinAttr } from '../telemetry/gen-ai-attributes.js';
import type { GenAiSpan, SpanAttributeValue } from '../telemetry/span-types.js';
import type { SpanDraft } from './span-state.js';
import { contextCounts } from '../../models/context-counts.js';

/*
 * What the span projection writes on spans and span events, record by record: pure functions of a record's data.
 * Content (messages, arguments, results, reasons, commands) goes through `content`, which returns undefined unless
 * content is captured; an undefined attribute is left out.
 */

/** Span or event attributes; an undefined value is not exported. */
export type Attributes = Record<string, SpanAttributeValue | undefined>;

/** A content value as exported (clipped), or undefined when content is not captured. */
export type Content = (value: unknown) => string | undefined;

/** The model input a `context.projected` names (its blob): the exact messages and tools the provider received. */
export interface ModelInputContent {
  messages: readonly ModelMessage[];
  tools?: readonly ModelToolDescription[];
}

const partsOf = (message: ModelMessage): unknown[] => {
  if (message.role === 'tool') return [{ type: 'tool_call_response', id: message.callId, response: message.content }];
  const text = message.content ? [{ type: 'text', content: message.content }] : [];
  if (message.role !== 'assistant') return text;
  return [...text, ...(message.toolCalls ?? []).map((call) => ({ type: 'tool_call', id: call.callId, name: call.name, arguments: call.arguments }))];
};

/**
 * A chat span's prompt, in the GenAI conventions' shapes: the system messages as `gen_ai.system_instructions`, the
 * rest as `gen_ai.input.messages` (`{ role, parts }`), the tools offered as `gen_ai.tool.definitions`. Content only.
 */
export const inputAttributes = (input: ModelInputContent, content: Content): Attributes => {
  const system = input.messages.filter((message) => message.role === 'system');
  const rest = input.messages.filter((message) => message.role !== 'system');
  return {
    [attr.systemInstructions]: system.length > 0 ? content(system.map((message) => ({ type: 'text', content: message.content }))) : undefined,
    [attr.inputMessages]: content(rest.map((message) => ({ role: message.role, parts: partsOf(message) }))),
    [attr.toolDefinitions]: input.tools && input.tools.length > 0 ? content(input.tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: tool.inputSchema }))) : undefined,
  };
};

/** The agent path of an actor: a turn's actor (`root/turn-3`) belongs to its agent (`root`). */
export const agentPathOf = (actor: string): string => actor.replace(/\/turn-\d+$/, '');

/** The agent a child agent's path hangs under when its `delegation.started` is missing: `root/delegation-2/map` → `root`. */
export const parentAgentOf = (path: string): string | undefined => {
  if (path === 'root') return undefined;
  const at = path.lastIndexOf('/delegation-');
  return at > 0 ? path.slice(0, at) : 'root';
};

/** A model call's span name: `chat <model>`, or `chat` when the model is unknown. */
export const chatName = (model: string | undefined): string => (model ? `${operation.chat} ${model}` : operation.chat);

/** `server.address` / `server.port` of a provider endpoint recorded as a URL (scripts and custom sources have none). */
export const serverOf = (source: string | undefined): Attributes => {
  if (!source || !/^https?:\/\//i.test(source)) return {};
  try {
    const url = new URL(source);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { [attr.serverAddress]: url.hostname.replace(/^\[|\]$/g, ''), [attr.serverPort]: port };
  } catch {
    return {};
  }
};

/** Where a provider recorded in `session.created` (the primary or a fallback) serves from. */
export const sourceOf = (draft: SpanDraft, provider: string, model: string | undefined): string | undefined => {
  const chain = draft.provider ? [draft.provider, ...(draft.provider.fallbacks ?? [])] : [];
  return (chain.find((entry) => entry.name === provider && (model === undefined || entry.model === model)) ?? chain.find((entry) => entry.name === provider))?.source;
};

/** The root agent's span (`invoke_agent <name>`), from `session.created`: the task is its input message. */
export const rootAgentAttributes = (created: SessionCreated, span: { agentName: string; conversation: Attributes; sessionId: string; content: Content }): Attributes => ({
  [attr.operationName]: operation.invokeAgent,
  [attr.agentName]: span.agentName,
  [attr.agentId]: 'root',
  ...span.conversation,
  [reinAttr.sessionId]: span.sessionId,
  [attr.providerName]: created.provider.name,
  [attr.requestModel]: created.provider.model,
  [attr.inputMessages]: span.content([{ role: 'user', parts: [{ type: 'text', content: created.task }] }]),
});

/** A model call's context, from `context.projected`: its turn, input, size, phase, and what was left out or compacted. */
export const contextAttributes = (projected: ContextProjected): Attributes => ({
  [reinAttr.turn]: projected.turn,
  [reinAttr.contextInput]: projected.input,
  [reinAttr.contextTokens]: projected.estimatedTokens,
  [reinAttr.contextPhase]: projected.phase,
  [reinAttr.contextExcluded]: contextCounts(projected).excluded,
  [reinAttr.contextCompacted]: contextCounts(projected).compacted,
});

/** The event of a model attempt that did not end the call (`rein.model.<decision>`: retry, fallback…). */
export const attemptEventAttributes = (attempted: ModelAttempted, content: Content): Attributes => ({
  [reinAttr.attempt]: attempted.attempt,
  [attr.providerName]: attempted.provider,
  [attr.requestModel]: attempted.model,
  [attr.errorType]: attempted.errorCode,
  [reinAttr.delayMs]: attempted.delayMs,
  [reinAttr.fallbackProvider]: attempted.fallbackTo?.provider,
  [reinAttr.fallbackModel]: attempted.fallbackTo?.model,
  [reinAttr.reason]: content(attempted.message),
});

/**
 * A model call's end, from `model.responded`: usage (cache reads and writes apart), its cost when priced (else
 * `rein.cost.unknown`: an unpriced call is never a cost of 0), finish reason and, when content is captured, the
 * reply's parts.
 */
export const responseAttributes = (reply: ModelResponded, capture: boolean, content: Content, costUsd?: number): Attributes => {
  const parts = capture
    ? [
        ...(reply.reasoning ? [{ type: 'reasoning', content: reply.reasoning }] : []),
        ...(reply.text ? [{ type: 'text', content: reply.text }] : []),
        ...reply.toolCalls.map((call) => ({ type: 'tool_call', id: call.callId, name: call.name, arguments: call.arguments })),
      ]
    : [];
  return {
    [reinAttr.turn]: reply.turn,
    [attr.inputTokens]: reply.usage.inputTokens,
    [attr.outputTokens]: reply.usage.outputTokens,
    [reinAttr.cacheReadTokens]: reply.usage.cacheReadTokens,
    [reinAttr.cacheWriteTokens]: reply.usage.cacheWriteTokens,
    [reinAttr.costUsd]: costUsd,
    [reinAttr.costUnknown]: costUsd === undefined ? true : undefined,
    [attr.finishReasons]: [reply.stopReason],
    [reinAttr.toolCalls]: reply.toolCalls.length,
    [attr.outputMessages]: content([{ role: 'assistant', parts, finish_reason: reply.stopReason }]),
  };
};

/** A tool call's span (`execute_tool <tool>`) as its model call proposed it; an `mcp__<server>__…` tool names its server. */
export const toolCallAttributes = (call: ToolCall, span: { agent: string; conversation: Attributes; content: Content }): Attributes => ({
  [attr.operationName]: operation.executeTool,
  [attr.toolName]: call.name,
  [attr.toolCallId]: call.callId,
  [attr.toolType]: 'function',
  [reinAttr.mcpServer]: /^mcp__(.+?)__./.exec(call.name)?.[1],
  ...span.conversation,
  [reinAttr.actor]: span.agent,
  [attr.toolCallArguments]: span.content(call.arguments),
});

/** The `rein.permission.decided` event of a tool call. */
export const permissionAttributes = (decided: PermissionDecided, content: Content): Attributes => ({
  [reinAttr.decisionValue]: decided.decision,
  [reinAttr.source]: decided.source,
  [reinAttr.rule]: decided.rule ?? undefined,
  [reinAttr.mode]: decided.mode,
  [reinAttr.classes]: decided.classes && decided.classes.length > 0 ? decided.classes : undefined,
  [reinAttr.reason]: content(decided.reason),
});

/** The `rein.verification` event, on its tool call or else on its agent. */
export const verificationAttributes = (verified: VerificationRecorded, content: Content): Attributes => ({
  [reinAttr.verificationName]: verified.name,
  [reinAttr.verificationStatus]: verified.status,
  [attr.errorType]: verified.errorCode,
  [reinAttr.exitCode]: verified.exitCode ?? undefined,
  [reinAttr.signal]: verified.signal,
  [reinAttr.timedOut]: verified.timedOut,
  [reinAttr.command]: content(verified.command),
  [reinAttr.summary]: content(verified.summary),
});

/**
 * A tool call's end, from `tool.settled`. A command is judged by how it ran whatever the call's status, as `rein show`
 * and `rein trace` judge it: a command that exited non-zero, was killed or timed out ends its span in error.
 */
export const settledOutcome = (settled: ToolSettled, content: Content): { status: GenAiSpan['status']; attributes: Attributes } => {
  const ranBadly = settled.execution ? executionFailure(settled.execution) : undefined;
  const failure = settled.status === 'error' ? (settled.errorCode ?? 'error') : ranBadly;
  return {
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
  };
};

/** A child agent's span (`invoke_agent <role>`), from `delegation.started`: its task's objective is its input message. */
export const childAgentAttributes = (started: DelegationStarted, conversation: Attributes, content: Content): Attributes => ({
  [attr.operationName]: operation.invokeAgent,
  [attr.agentName]: started.task.role,
  [attr.agentId]: started.child,
  ...conversation,
  [reinAttr.taskId]: started.taskId,
  [reinAttr.role]: started.task.role,
  [reinAttr.depth]: started.task.depth,
  [attr.agentDescription]: content(started.task.title),
  [attr.inputMessages]: content([{ role: 'user', parts: [{ type: 'text', content: started.task.objective }] }]),
});

/** A `delegate_task` call's end, from `delegation.joined`: in error unless the join was satisfied. */
export const joinedOutcome = (joined: DelegationJoined, content: Content): { status: GenAiSpan['status']; attributes: Attributes } => ({
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
});

/** An agent's end, from `session.ended`: its outcome, and the fail-closed findings nothing resolved. */
export const endedAttributes = (ended: SessionEnded, failed: boolean, content: Content): Attributes => ({
  [reinAttr.outcome]: ended.status,
  [attr.errorType]: failed ? ended.status : undefined,
  [reinAttr.reason]: content(ended.reason),
  // A final answer after a blocked turn: the fail-closed findings nothing resolved (its claim rests on no MutationReady turn).
  [reinAttr.unresolved]: ended.unresolved ? ended.unresolved.findings.map((finding) => finding.class) : undefined,
  // The typed final answer is content (it may quote the workspace): exported only when content is captured.
  [reinAttr.output]: 'output' in ended ? content(JSON.stringify(ended.output ?? null)) : undefined,
  [reinAttr.outputErrors]: ended.outputErrors ? content(ended.outputErrors.join('; ')) : undefined,
});
