import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinTools, createMemoryEventStore, createRein, defineTool, definePlugin, readOnlyAnnotations, toolTraitsOf, type ModelProvider, type ModelRequest, type ToolDefinition } from 'rein';
import { runScriptedSession } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

/** A host's own error class, as a tool of the host would throw it. */
class QuotaExceeded extends Error {}

/** A model that calls `tool` with `args` once, then answers with what it read: it records every request it got. */
const callingModel = (tool: string, args: Record<string, unknown>): ModelProvider & { requests: ModelRequest[] } => {
  const requests: ModelRequest[] = [];
  return {
    name: 'calling',
    model: 'calling-1',
    requests,
    async *stream(request) {
      requests.push(request);
      yield { type: 'started' };
      if (request.turn === 1) {
        yield { type: 'tool-intent', providerCallId: 'c1', name: tool, arguments: args };
        yield { type: 'finished', stopReason: 'tool_use' };
        return;
      }
      yield { type: 'text-delta', text: 'noted' };
      yield { type: 'finished', stopReason: 'end_turn' };
    },
  };
};

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-define-tool-');
});
afterAll(() => workspace.remove());

const settledOf = (records: ReadonlyArray<{ type: string; data: unknown }>) => records.filter((record) => record.type === 'tool.settled').map((record) => record.data as Record<string, unknown>);

describe('a host tool that throws', () => {
  it('is a failure the model reads, recorded with the error class, and the session goes on', async () => {
    const charge = defineTool({
      name: 'charge_card',
      description: 'Charge the customer.',
      parameters: z.object({ cents: z.number() }),
      execute: async () => {
        throw new QuotaExceeded('the payment quota is spent for today');
      },
    });
    const model = callingModel('charge_card', { cents: 100 });
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: model, tools: [...builtinTools(), charge], permissions: { approveAll: true } });
    const session = await rein.startSession({ task: 'charge 1 dollar' });
    const result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    const records = await store.read(session.id);
    expect(records.some((record) => record.type === 'effect.failed')).toBe(false);
    expect(settledOf(records)).toEqual([expect.objectContaining({ name: 'charge_card', status: 'error', errorCode: 'ToolFailed', errorClass: 'QuotaExceeded' })]);
    const answer = model.requests[1]!.messages.find((message) => message.role === 'tool');
    expect(answer).toMatchObject({ isError: true, content: expect.stringContaining('QuotaExceeded: the payment quota is spent for today') });
  });

  it('follows the same rule as a plugin tool that throws', async () => {
    const plugin = definePlugin({
      manifest: { id: 'billing', name: 'Billing', version: '1.0.0', permissions: ['network'], contributes: { tools: ['charge'] } },
      setup: () => ({
        tools: [{ name: 'charge', description: 'Charge.', parameters: z.object({}), risk: 'network' as const, execute: async () => Promise.reject(new QuotaExceeded('spent')) }],
      }),
    });
    const model = callingModel('billing__charge', {});
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: model, plugins: [plugin], permissions: { approveAll: true } });
    const session = await rein.startSession({ task: 'charge' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(settledOf(await store.read(session.id))).toEqual([expect.objectContaining({ status: 'error', errorCode: 'ToolFailed', errorClass: 'QuotaExceeded' })]);
    await rein.close();
  });
});

describe('defineTool', () => {
  it('takes the short form: name, description, parameters, execute, with careful defaults', () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look a word up.', parameters: z.object({ word: z.string() }), readOnly: true, execute: async ({ word }) => `${word}: a word` });
    expect(lookup).toMatchObject({ annotations: readOnlyAnnotations, risk: 'read', sideEffect: 'read', resumePolicy: 'rerun-after-check' });
    const send = defineTool({ name: 'send_mail', description: 'Send a mail.', parameters: z.object({ to: z.string() }), execute: async () => 'sent' });
    // Nothing declared: asked for, never beside another call, never rerun after a crash without a person.
    expect(send).toMatchObject({ annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true }, risk: 'network', sideEffect: 'external-write', resumePolicy: 'require-user-confirmation' });
    expect(toolTraitsOf({ risk: 'write' })).toMatchObject({ risk: 'write', sideEffect: 'workspace-write', annotations: { readOnly: false } });
  });

  it('keeps the eight-field form and `{ ok, output }` results unchanged', async () => {
    const full: ToolDefinition<{ n: number }> = defineTool({
      name: 'double',
      description: 'Double a number.',
      parameters: z.object({ n: z.number() }),
      annotations: readOnlyAnnotations,
      risk: 'read',
      sideEffect: 'none',
      resumePolicy: 'replay-from-event',
      execute: async ({ n }) => ({ ok: true, output: String(n * 2) }),
    });
    expect(full).toMatchObject({ annotations: readOnlyAnnotations, risk: 'read', sideEffect: 'none', resumePolicy: 'replay-from-event' });
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'x', toolCalls: [{ name: 'double', arguments: { n: 21 } }] }, { text: 'done' }] }, rein: { tools: [full] } });
    expect(settledOf(run.records)).toEqual([expect.objectContaining({ status: 'ok', observation: '42' })]);
  });

  it('accepts plain text and plain object results', async () => {
    const weather = defineTool({ name: 'weather', description: 'The weather.', parameters: z.object({ city: z.string() }), readOnly: true, execute: async ({ city }) => ({ city, celsius: 21 }) });
    const greet = defineTool({ name: 'greet', description: 'Greet.', parameters: z.object({}), readOnly: true, execute: async () => 'hello' });
    const nothing = defineTool({ name: 'noop', description: 'Nothing.', parameters: z.object({}), readOnly: true, execute: async () => undefined });
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'x', toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }, { name: 'greet', arguments: {} }, { name: 'noop', arguments: {} }] }, { text: 'done' }] },
      rein: { tools: [weather, greet, nothing] },
    });
    expect(run.result.status).toBe('completed');
    const settled = settledOf(run.records);
    expect(JSON.parse(String(settled.find((data) => data.name === 'weather')!.observation))).toEqual({ city: 'Oslo', celsius: 21 });
    expect(settled.find((data) => data.name === 'greet')).toMatchObject({ status: 'ok', observation: 'hello' });
    expect(settled.find((data) => data.name === 'noop')).toMatchObject({ status: 'ok', observation: '' });
  });

  it('asks before a short-form tool that declared nothing runs, as the defaults promise', async () => {
    const send = defineTool({ name: 'send_mail', description: 'Send a mail.', parameters: z.object({ to: z.string() }), execute: async () => 'sent' });
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'x', toolCalls: [{ name: 'send_mail', arguments: { to: 'a@b.c' } }] }, { text: 'done' }] }, rein: { tools: [send], permissions: { mode: 'accept-edits' } } });
    expect(run.result.status).toBe('paused');
    expect(run.session.pendingApprovals()).toEqual([expect.objectContaining({ tool: 'send_mail' })]);
    await run.session.cancel('test over');
  });
});
