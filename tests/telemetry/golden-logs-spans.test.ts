import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseFixture } from '../../scripts/fixtures/fixture-format.js';
import { spansOfRecords } from '../../src/projections/spans.view.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { checkSpanTree } from './telemetry-support.js';

const logsDirectory = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));
const load = async (file: string) => upcastRecords(parseFixture(await readFile(join(logsDirectory, file), 'utf8'), file).records);

describe('the golden logs as spans', () => {
  it('every golden log exports a well-formed span tree: one root, parents inside, one span per model and tool call', async () => {
    const files = (await readdir(logsDirectory)).filter((name) => name.endsWith('.ndjson'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const records = await load(file);
      if (!records.some((record) => record.type === 'session.created')) continue;
      checkSpanTree(records, spansOfRecords(records));
    }
  });

  it('the recorded delegation: each child under its call, the child stopped by its deadline failed, its running command unsettled', async () => {
    const spans = spansOfRecords(await load('delegation.ndjson'));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const children = spans.filter((span) => span.name.startsWith('invoke_agent') && span.parentSpanId);
    expect(children.map((span) => span.attributes['gen_ai.agent.id']).sort()).toEqual(['root/delegation-2/map', 'root/delegation-2/review', 'root/delegation-4/tests', 'root/delegation-6/slow']);
    for (const child of children) expect(byId.get(child.parentSpanId!)!.name).toBe('execute_tool delegate_task');
    const slow = children.find((span) => span.attributes['gen_ai.agent.id'] === 'root/delegation-6/slow')!;
    expect(slow.status.code).toBe('error');
    expect(slow.attributes['error.type']).toBe('runtime');
    const command = spans.find((span) => span.parentSpanId === slow.spanId && span.name === 'execute_tool bash')!;
    expect(command.attributes).toMatchObject({ 'rein.unsettled': true, 'error.type': 'cancelled' });
    expect(command.events.map((event) => event.name)).toEqual(['rein.permission.decided', 'rein.approval.requested', 'rein.approval.replied', 'rein.permission.decided', 'rein.tool.started']);
    const joins = spans.filter((span) => span.name === 'execute_tool delegate_task').map((span) => span.attributes['rein.join.outcome']);
    expect(joins).toEqual(['satisfied', 'satisfied', 'unsatisfied']);
  });

  it('the recorded fallback and in-doubt logs: attempts as events, one model call across a restart', async () => {
    const [fallback] = spansOfRecords(await load('fallback.ndjson')).filter((span) => span.name.startsWith('chat'));
    expect(fallback!.name).toBe('chat primary-1');
    expect(fallback!.attributes).toMatchObject({ 'gen_ai.request.model': 'primary-1', 'gen_ai.provider.name': 'scripted', 'gen_ai.response.model': 'script', 'rein.model.attempts': 3 });
    expect(fallback!.events.map((event) => event.name)).toEqual(['rein.model.retry', 'rein.model.fallback']);
    const restarted = spansOfRecords(await load('interrupted-in-flight.ndjson'));
    expect(restarted.map((span) => span.name).sort()).toEqual(['chat script', 'invoke_agent rein']);
    expect(restarted.find((span) => span.name === 'invoke_agent rein')!.events.map((event) => event.name)).toEqual(['rein.user.message', 'rein.session.interrupted', 'rein.session.resumed', 'rein.effect.resolved']);
  });

  it('the recorded raise: the spent budget ends the root span, the raise continues it under the ended one', async () => {
    const spans = spansOfRecords(await load('budget-raised.ndjson'));
    const agents = spans.filter((span) => span.name === 'invoke_agent rein');
    expect(agents).toHaveLength(2);
    const [ended, continued] = [agents.find((span) => !span.parentSpanId)!, agents.find((span) => span.parentSpanId)!];
    expect(continued.parentSpanId).toBe(ended.spanId);
    expect(ended.attributes['rein.session.outcome']).toBe('budget-exhausted');
    expect(continued.events.map((event) => event.name)).toContain('rein.session.budgets-raised');
    expect(continued.events.find((event) => event.name === 'rein.session.budgets-raised')!.attributes['rein.budget.max_turns']).toBe(5);
    const chats = spans.filter((span) => span.name.startsWith('chat'));
    expect(chats.filter((span) => span.parentSpanId === continued.spanId).map((span) => span.attributes['rein.effect.id'])).toEqual(['root:e5', 'root:e7']);
    expect(chats.filter((span) => span.parentSpanId === ended.spanId).map((span) => span.attributes['rein.effect.id'])).toEqual(['root:e1', 'root:e3']);
  });
});
