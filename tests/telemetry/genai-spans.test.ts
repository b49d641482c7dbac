import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRein } from '../../src/rein.js';
import { exportSessionSpans } from '../../src/telemetry/telemetry.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { spanIdOf, traceIdOf } from '../../src/telemetry/span-ids.js';
import { makeTempDir } from '../support/temp-dir.js';
import { bySpanId, goldenReplies, runGolden, testProvider, type GoldenRun } from './telemetry-support.js';

const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;
const UNSET = 0;

const named = (spans: readonly ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
const one = (spans: readonly ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const eventsOf = (span: ReadableSpan, name: string) => span.events.filter((event) => event.name === name);

describe('sessions as OpenTelemetry GenAI spans', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let run: GoldenRun;
  let spans: ReadableSpan[];

  beforeEach(async () => {
    workspace = await makeTempDir();
    run = await runGolden(workspace.path);
    spans = run.exporter.getFinishedSpans();
  });
  afterEach(() => workspace.remove());

  it('maps the golden session (delegation, a retried call, a denied call, a failed verification) to the GenAI span tree', () => {
    expect(run.result.status).toBe('completed');
    const root = one(spans, 'invoke_agent rein');
    const delegate = one(spans, 'execute_tool delegate_task');
    const child = one(spans, 'invoke_agent explorer');
    const write = one(spans, 'execute_tool write');
    const check = one(spans, 'execute_tool check');
    const read = one(spans, 'execute_tool read');
    const report = one(spans, 'execute_tool submit_report');
    const chats = named(spans, 'chat test-model');
    expect(chats).toHaveLength(5);
    expect(spans).toHaveLength(12);

    // One trace, derived from the session id; ids derived from the log's own ids.
    for (const span of spans) expect(span.spanContext().traceId).toBe(traceIdOf(run.session.id));
    expect(root.spanContext().spanId).toBe(spanIdOf(run.session.id, 'agent', 'root'));
    expect(child.spanContext().spanId).toBe(spanIdOf(run.session.id, 'agent', 'root/delegation-2/map'));

    // Parent links: the root has none; calls hang under their agent; the child under the call that started it.
    const rootId = root.spanContext().spanId;
    expect(root.parentSpanContext).toBeUndefined();
    for (const span of [delegate, write, check]) expect(span.parentSpanContext?.spanId).toBe(rootId);
    expect(child.parentSpanContext?.spanId).toBe(delegate.spanContext().spanId);
    for (const span of [read, report]) expect(span.parentSpanContext?.spanId).toBe(child.spanContext().spanId);
    const rootChats = chats.filter((chat) => chat.parentSpanContext?.spanId === rootId);
    const childChats = chats.filter((chat) => chat.parentSpanContext?.spanId === child.spanContext().spanId);
    expect([rootChats.length, childChats.length]).toEqual([3, 2]);

    // Kinds.
    for (const chat of chats) expect(chat.kind).toBe(CLIENT);
    for (const span of [root, delegate, child, write, check, read, report]) expect(span.kind).toBe(INTERNAL);

    // Agent attributes.
    expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'rein', 'gen_ai.agent.id': 'root', 'gen_ai.conversation.id': run.session.id, 'gen_ai.provider.name': 'test', 'gen_ai.request.model': 'test-model', 'rein.session.outcome': 'completed' });
    expect(root.status.code).toBe(UNSET);
    expect(child.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'explorer', 'gen_ai.agent.id': 'root/delegation-2/map', 'rein.task.id': 'map', 'rein.report.status': 'completed', 'gen_ai.usage.input_tokens': 40 });

    // Model calls: provider, models, usage, finish reasons; the retried one has a retry event and two attempts.
    for (const chat of chats) {
      expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'test', 'gen_ai.request.model': 'test-model', 'gen_ai.response.model': 'test-model', 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 10 });
    }
    const retried = chats.filter((chat) => eventsOf(chat, 'rein.model.retry').length > 0);
    expect(retried).toHaveLength(1);
    expect(retried[0]!.attributes).toMatchObject({ 'rein.model.attempts': 2, 'rein.effect.id': 'root:e1', 'gen_ai.response.finish_reasons': ['tool_use'] });
    expect(eventsOf(retried[0]!, 'rein.model.retry')[0]!.attributes).toMatchObject({ 'rein.model.attempt': 1, 'error.type': 'overloaded', 'gen_ai.provider.name': 'test' });
    expect(chats.filter((chat) => chat !== retried[0]).every((chat) => chat.attributes['rein.model.attempts'] === 1)).toBe(true);

    // Tool calls: name, call id, status and error type; permission decisions and verification as events.
    expect(write.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'write', 'gen_ai.tool.type': 'function', 'rein.tool.status': 'error', 'error.type': 'Denied', 'rein.tool.failed_stage': 'permission' });
    expect(write.attributes['gen_ai.tool.call.id']).toMatch(/^root:e\d+\.0$/);
    expect(write.status.code).toBe(ERROR);
    expect(eventsOf(write, 'rein.permission.decided')[0]!.attributes).toMatchObject({ 'rein.permission.decision': 'deny', 'rein.permission.source': 'rule', 'rein.permission.rule': 'deny write:b.txt' });
    expect(eventsOf(write, 'rein.tool.started')).toHaveLength(0);
    expect(check.status.code).toBe(ERROR);
    expect(check.attributes).toMatchObject({ 'error.type': 'NonZeroExit', 'rein.tool.status': 'error' });
    expect(eventsOf(check, 'rein.verification')[0]!.attributes).toMatchObject({ 'rein.verification.name': 'check', 'rein.verification.status': 'failed', 'rein.verification.exit_code': 1 });
    expect(read.status.code).toBe(UNSET);
    expect(eventsOf(read, 'rein.permission.decided')[0]!.attributes).toMatchObject({ 'rein.permission.decision': 'allow' });
    expect(eventsOf(read, 'rein.tool.started')).toHaveLength(1);

    // The delegation: accepted and started as events on the call, which ends with the join.
    expect(delegate.attributes).toMatchObject({ 'rein.join.policy': 'all', 'rein.join.outcome': 'satisfied', 'rein.join.children': 1, 'rein.tool.status': 'ok' });
    expect(eventsOf(delegate, 'rein.delegation.accepted')).toHaveLength(1);
    expect(eventsOf(delegate, 'rein.delegation.started')[0]!.attributes).toMatchObject({ 'rein.task.id': 'map', 'gen_ai.agent.id': 'root/delegation-2/map' });

    // Times come from the records: every child inside its parent's interval, every span with a positive extent.
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const ns = (time: [number, number]) => time[0] * 1e9 + time[1];
    for (const span of spans) {
      expect(ns(span.endTime)).toBeGreaterThanOrEqual(ns(span.startTime));
      const parent = span.parentSpanContext ? byId.get(span.parentSpanContext.spanId) : undefined;
      if (parent) expect(ns(span.startTime)).toBeGreaterThanOrEqual(ns(parent.startTime));
    }
  });

  it('carries no content unless it is asked for', () => {
    for (const span of spans) {
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.agent.description']) expect(span.attributes[key]).toBeUndefined();
      expect(JSON.stringify(span.attributes)).not.toContain('alpha');
      for (const event of span.events) expect(event.attributes?.['rein.reason']).toBeUndefined();
    }
  });

  it('exports the same spans, with the same ids, from the log, twice, as the live export sent', async () => {
    const first = new InMemorySpanExporter();
    const second = new InMemorySpanExporter();
    const exported = await exportSessionSpans(run.store, run.session.id, { exporter: first });
    await exportSessionSpans(run.store, run.session.id, { exporter: second });
    expect(exported).toMatchObject({ traceId: traceIdOf(run.session.id), spans: 12, exported: 12, failed: 0 });
    expect(bySpanId(first.getFinishedSpans())).toEqual(bySpanId(second.getFinishedSpans()));
    expect(bySpanId(first.getFinishedSpans())).toEqual(bySpanId(spans));
    expect(first.getFinishedSpans()[0]!.resource.attributes).toMatchObject({ 'service.name': 'rein' });
    expect(first.getFinishedSpans()[0]!.instrumentationScope.name).toBe('rein');
  });

  it('captures content on request, with every marked secret redacted', async () => {
    const secret = 'sk-test-0123456789abcdefXYZ';
    const marked = 'hunter2-very-secret-value';
    const other = await makeTempDir();
    try {
      const captured = await runGolden(other.path, { replies: goldenReplies(`${secret} ${marked}`), telemetry: { captureContent: true, secrets: [marked] } });
      const all = captured.exporter.getFinishedSpans();
      const text = JSON.stringify(all.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })));
      expect(text).not.toContain(secret);
      expect(text).not.toContain(marked);
      expect(text).toContain('[redacted]');
      const write = one(all, 'execute_tool write');
      expect(JSON.parse(String(write.attributes['gen_ai.tool.call.arguments']))).toEqual({ path: 'b.txt', content: 'token [redacted] [redacted]' });
      expect(String(write.attributes['gen_ai.tool.call.result'])).toContain('Denied');
      const root = one(all, 'invoke_agent rein');
      expect(JSON.parse(String(root.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'find alpha, write b.txt, check' }] }]);
      const answered = all.find((span) => span.name.startsWith('chat') && String(span.attributes['gen_ai.output.messages']).includes('Splitting the work.'));
      expect(JSON.parse(String(answered!.attributes['gen_ai.output.messages']))[0]).toMatchObject({ role: 'assistant', finish_reason: 'tool_use', parts: [{ type: 'text' }, { type: 'tool_call', name: 'delegate_task' }] });
      const read = one(all, 'execute_tool read');
      expect(String(read.attributes['gen_ai.tool.call.result'])).toContain('alpha');
    } finally {
      await other.remove();
    }
  });

  it('a final answer over a blocked turn completes with the findings nothing resolved, on the root span', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = testProvider({ root: [{ text: 'Reading.', calls: [{ name: 'read', arguments: {} }] }, { text: 'Done.' }] });
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, memory: false, telemetry: { exporter } });
    const session = await rein.startSession({ task: 'read something' });
    expect((await session.whenQuiet()).status).toBe('completed');
    await rein.telemetry!.flush();
    const root = one(exporter.getFinishedSpans(), 'invoke_agent rein');
    expect(root.attributes).toMatchObject({ 'rein.session.outcome': 'completed', 'rein.session.unresolved_findings': ['tool.schema_invalid'] });
    expect(one(exporter.getFinishedSpans(), 'execute_tool read').attributes).toMatchObject({ 'error.type': 'InvalidInput', 'rein.tool.failed_stage': 'schema' });
    expect(eventsOf(root, 'rein.typestate.blocked')[0]!.attributes).toMatchObject({ 'rein.typestate.findings': ['tool.schema_invalid'] });
  });

  it('a resumed session ships only what ends after the resume: the two processes together sent the log export, once each', async () => {
    const store = createMemoryEventStore();
    const provider = testProvider({ root: [{ text: 'Writing.', calls: [{ name: 'write', arguments: { path: 'c.txt', content: 'c' } }] }, { text: 'Done.' }] });
    const first = new InMemorySpanExporter();
    const before = await createRein({ store, workspace: workspace.path, provider, memory: false, telemetry: { exporter: first } });
    const paused = await before.startSession({ task: 'write c.txt' });
    expect((await paused.whenQuiet()).status).toBe('paused');
    await before.close('the process exits');
    await before.telemetry!.flush();
    // Only the first model call had ended: the agent and the write waiting for approval had not.
    expect(first.getFinishedSpans().map((span) => span.name)).toEqual(['chat test-model']);

    const second = new InMemorySpanExporter();
    const after = await createRein({ store, workspace: workspace.path, provider, memory: false, telemetry: { exporter: second } });
    const { session } = await after.resumeSession(paused.id);
    for (const request of session.pendingApprovals()) await session.approve(request.approvalId, { decision: 'allow-once' });
    expect((await session.whenQuiet()).status).toBe('completed');
    await after.telemetry!.flush();

    const both = [...first.getFinishedSpans(), ...second.getFinishedSpans()];
    expect(new Set(both.map((span) => span.spanContext().spanId)).size).toBe(both.length);
    const fromLog = new InMemorySpanExporter();
    await exportSessionSpans(store, paused.id, { exporter: fromLog });
    expect(bySpanId(both)).toEqual(bySpanId(fromLog.getFinishedSpans()));
    const write = one(both, 'execute_tool write');
    expect(write.events.map((event) => event.name)).toEqual(['rein.permission.decided', 'rein.approval.requested', 'rein.approval.replied', 'rein.permission.decided', 'rein.tool.started']);
    // close() left the session waiting for its approval (no interruption): the resume follows the message directly.
    expect(one(both, 'invoke_agent rein').events.map((event) => event.name)).toEqual(['rein.user.message', 'rein.session.resumed']);
  });
});
