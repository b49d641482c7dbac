import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryEventStore, createRein, createScriptedProvider, defaultAbandonGraceMs, defineTool, flattenRecords, type EventStore, type ModelProvider } from 'rein';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-abandon-');
});
afterAll(() => workspace.remove());

/** A host tool that never settles and never looks at its AbortSignal; `started` resolves once it runs. */
const stuckTool = () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({ name: 'stuck', description: 'Never returns.', parameters: z.object({}), readOnly: true, execute: () => (started(), new Promise<string>(() => undefined)) });
  return { tool, running };
};

const callingStuck = () => createScriptedProvider({ turns: [{ text: 'Calling.', toolCalls: [{ name: 'stuck', arguments: {} }] }, { text: 'Done.' }] });

/** A provider whose stream never yields and ignores the request's signal; `started` resolves once it is called. */
const stuckProvider = (): ModelProvider & { running: Promise<void> } => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  return {
    name: 'stuck',
    model: 'stuck-1',
    running,
    async *stream() {
      started();
      await new Promise(() => undefined);
    },
  };
};

const settledOf = async (store: EventStore, id: string) =>
  flattenRecords(await store.read(id)).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; errorCode?: string; observation: string });

describe('an effect that ignores its AbortSignal is abandoned after the grace period (issue 30 item 19)', () => {
  it('a tool: session.interrupt() and whenQuiet() finish, and rein.close() too', async () => {
    const { tool, running } = stuckTool();
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: callingStuck(), tools: [tool], abandonGraceMs: 30 });
    const session = await rein.startSession({ task: 'call the stuck tool' });
    await running;
    await session.interrupt('the host is leaving');
    expect((await session.whenQuiet()).status).toBe('interrupted');
    await rein.close();
  });

  it('a tool: the wall-time budget ends the session budget-exhausted, the call settled Cancelled', async () => {
    const { tool } = stuckTool();
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: callingStuck(), tools: [tool], abandonGraceMs: 30, budgets: { maxWallTimeMs: 300 } });
    const session = await rein.startSession({ task: 'call the stuck tool' });
    const result = await session.whenQuiet();
    expect(result.status).toBe('budget-exhausted');
    const [settled] = await settledOf(store, session.id);
    expect(settled).toMatchObject({ name: 'stuck', errorCode: 'Cancelled' });
    expect(settled?.observation).toContain('was abandoned');
    await rein.close();
  });

  it('a tool: cancel() ends the session cancelled without waiting for it', async () => {
    const { tool, running } = stuckTool();
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: callingStuck(), tools: [tool], abandonGraceMs: 30 });
    const session = await rein.startSession({ task: 'call the stuck tool' });
    await running;
    await session.cancel('enough');
    expect((await session.whenQuiet()).status).toBe('cancelled');
    await rein.close();
  });

  it('a provider: rein.close() finishes, and the wall-time budget ends a stuck model call', async () => {
    const provider = stuckProvider();
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, abandonGraceMs: 30 });
    const session = await rein.startSession({ task: 'answer' });
    await provider.running;
    await rein.close();
    expect((await session.whenQuiet()).status).toBe('interrupted');

    const budgeted = stuckProvider();
    const store = createMemoryEventStore();
    const other = await createRein({ store, workspace: workspace.path, provider: budgeted, abandonGraceMs: 30, budgets: { maxWallTimeMs: 300 } });
    const timed = await other.startSession({ task: 'answer' });
    expect((await timed.whenQuiet()).status).toBe('budget-exhausted');
    const failed = flattenRecords(await store.read(timed.id)).find((record) => record.type === 'model.failed')?.data as { error?: { code: string; message: string } };
    expect(failed.error).toMatchObject({ code: 'cancelled', message: expect.stringContaining('abandoned') });
    await other.close();
  });

  it('the grace period is an option (default 5 s); a bad one is USAGE', async () => {
    expect(defaultAbandonGraceMs).toBe(5_000);
    await expect(createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: callingStuck(), abandonGraceMs: -1 })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('abandonGraceMs') });
  });
});
