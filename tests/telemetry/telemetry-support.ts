import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelResponded } from '../../models/model.records.js';
import type { GenAiSpan } from '../../src/telemetry/span-types.js';
import { z } from 'zod';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein, type Rein } from '../../src/rein.js';
import type { ReinSession } from '../../src/session/session-handle.js';
import type { SessionResult } from '../../src/host/session-host.js';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import type { SpanViewOptions } from '../../src/projections/spans.view.js';
import { validReport } from '../support/delegation-fixtures.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** A verification tool: its name makes the default classifier take it for one, and it reports the test command it ran and its exit. */
export const checkTool = defineTool({
  name: 'check',
  description: 'Run the checks.',
  parameters: z.object({ pass: z.boolean() }).strict(),
  annotations: readOnlyAnnotations,
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'rerun-after-check',
  execute: async ({ pass }) =>
    pass
      ? { ok: true, output: 'all checks passed', execution: { command: 'npm test', exitCode: 0, durationMs: 4 } }
      : { ok: false, code: 'NonZeroExit', message: 'not ok 1 - adds\nexpected 3, got 4', execution: { command: 'npm test', exitCode: 1, durationMs: 4 } },
});

export type Reply = { text?: string; calls?: Array<{ name: string; arguments: Record<string, unknown> }>; fail?: 'overloaded' };

/**
 * A provider that plays `replies[<last segment of the actor path>][turn - 1]`; a reply with `fail` fails its first
 * attempt with that (retryable) error and answers the retry. `gate` holds a turn until the test releases it.
 */
export const testProvider = (replies: Record<string, Reply[]>, gate?: (actor: string, turn: number) => Promise<void>): ModelProvider => ({
  name: 'test',
  model: 'test-model',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const actor = (request.actor ?? 'root').split('/').pop() ?? '';
    await gate?.(request.actor ?? 'root', request.turn);
    yield { type: 'started', model: 'test-model' };
    const reply = replies[actor]?.[request.turn - 1];
    if (!reply) {
      yield { type: 'error', error: { code: 'script_exhausted', message: `no reply for ${actor} turn ${request.turn}`, retryable: false } };
      return;
    }
    if (reply.fail && (request.attempt ?? 1) === 1) {
      yield { type: 'error', error: { code: reply.fail, message: 'Overloaded (HTTP 529)', retryable: true, retryAfterMs: 0 } };
      return;
    }
    const calls = reply.calls ?? [];
    if (reply.text) yield { type: 'text-delta', text: reply.text };
    for (const [index, call] of calls.entries()) yield { type: 'tool-intent', providerCallId: `p${index}`, name: call.name, arguments: call.arguments };
    yield { type: 'usage', usage: { inputTokens: 20, outputTokens: 10 } };
    yield { type: 'finished', stopReason: calls.length > 0 ? 'tool_use' : 'end_turn' };
  },
});

/**
 * The golden session: a model call retried after an overload that delegates to an explorer (which reads a file and
 * reports), then a write a rule denies and a verification that fails, then the answer.
 */
export const goldenReplies = (secret = 'no-secret-here'): Record<string, Reply[]> => ({
  root: [
    { fail: 'overloaded', text: 'Splitting the work.', calls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'map', role: 'explorer', objective: 'Find where alpha is.' }] } }] },
    { text: 'Writing and checking.', calls: [{ name: 'write', arguments: { path: 'b.txt', content: `token ${secret}` } }, { name: 'check', arguments: { pass: false } }] },
    { text: `Done; the check failed (${secret}).` },
  ],
  map: [{ text: 'Reading.', calls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Reporting.', calls: [{ name: 'submit_report', arguments: validReport('finding-report', 'completed') }] }],
});

export interface GoldenRun {
  rein: Rein;
  store: EventStore;
  session: ReinSession;
  result: SessionResult;
  exporter: InMemorySpanExporter;
}

/** Run the golden session with live telemetry into an in-memory exporter (flushed before it resolves). */
export const runGolden = async (workspace: string, options: { telemetry?: SpanViewOptions; replies?: Record<string, Reply[]>; store?: EventStore } = {}): Promise<GoldenRun> => {
  await writeFile(join(workspace, 'a.txt'), 'alpha\n');
  const store = options.store ?? createMemoryEventStore();
  const exporter = new InMemorySpanExporter();
  const rein = await createRein({
    store,
    workspace,
    provider: testProvider(options.replies ?? goldenReplies()),
    tools: [...builtinTools(), checkTool],
    permissions: { rules: ['deny write:b.txt'] },
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    random: () => 0.5,
    memory: false,
    telemetry: { exporter, ...options.telemetry },
  });
  const session = await rein.startSession({ task: 'find alpha, write b.txt, check' });
  const result = await session.whenQuiet();
  await rein.telemetry!.flush();
  return { rein, store, session, result, exporter };
};

/** A span reduced to what an export must reproduce exactly (ids, tree, name, kind, times, attributes, events, status). */
export const comparable = (span: ReadableSpan) => ({
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parent: span.parentSpanContext?.spanId,
  name: span.name,
  kind: span.kind,
  start: span.startTime,
  end: span.endTime,
  attributes: span.attributes,
  events: span.events.map((event) => ({ name: event.name, time: event.time, attributes: event.attributes })),
  status: span.status,
  links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
});

export const bySpanId = (spans: readonly ReadableSpan[]) => [...spans].map(comparable).sort((a, b) => (a.spanId < b.spanId ? -1 : 1));

/** The model calls of a log: every effect a `callModel` request or a model record names. */
export const modelCallsOf = (records: readonly RecordEnvelope[]): Set<string> => {
  const calls = new Set<string>();
  for (const record of flattenRecords(records)) {
    const data = record.data as { effectId?: string; kind?: string };
    if ((record.type === 'effect.requested' && data.kind === 'callModel') || record.type === 'model.responded' || record.type === 'model.failed' || record.type === 'model.attempted') calls.add(data.effectId!);
  }
  return calls;
};

/** Every tool call the model proposed in a log. */
export const toolCallsOf = (records: readonly RecordEnvelope[]): string[] => records.filter((record) => record.type === 'model.responded').flatMap((record) => (record.data as ModelResponded).toolCalls.map((call) => call.callId));

/**
 * The shape every export of a log must have: unique span ids in one trace, one root (`invoke_agent rein`), every
 * other span's parent inside the trace, exactly one span per tool call and per model call, client kind for chats.
 */
export const checkSpanTree = (records: readonly RecordEnvelope[], spans: readonly GenAiSpan[]): void => {
  const ids = new Set(spans.map((span) => span.spanId));
  expect(ids.size, 'span ids are unique').toBe(spans.length);
  expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  expect(spans.filter((span) => !span.parentSpanId).map((span) => span.name)).toEqual(['invoke_agent rein']);
  for (const span of spans) if (span.parentSpanId) expect(ids.has(span.parentSpanId), `${span.name}'s parent is in the trace`).toBe(true);
  const tools = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool');
  expect(tools.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual([...toolCallsOf(records)].sort());
  const chats = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
  expect(chats.map((span) => span.attributes['rein.effect.id']).sort()).toEqual([...modelCallsOf(records)].sort());
  for (const span of spans) expect(span.kind).toBe(span.attributes['gen_ai.operation.name'] === 'chat' ? 'client' : 'internal');
  for (const span of spans) expect(span.endMs).toBeGreaterThanOrEqual(span.startMs);
};
