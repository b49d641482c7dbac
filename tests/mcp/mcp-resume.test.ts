import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** A server whose two tools wait until `release` is set (one read-only, one destructive); calls count how often each ran. */
const waitingServer = (state: { release: boolean; runs: Record<string, number> }) => {
  const server = new McpServer({ name: 'waiting', version: '1.0.0' });
  const wait = async (name: string) => {
    state.runs[name] = (state.runs[name] ?? 0) + 1;
    while (!state.release) await new Promise((resolve) => setTimeout(resolve, 10));
    return { content: [{ type: 'text' as const, text: `${name} done` }] };
  };
  server.registerTool('look', { description: 'Look (waits)', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, () => wait('look'));
  server.registerTool('change', { description: 'Change something (waits)', inputSchema: z.object({}), annotations: { destructiveHint: true } }, () => wait('change'));
  return server;
};

describe('resuming an MCP call that was in doubt', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let store: EventStore;
  const state = { release: false, runs: {} as Record<string, number> };
  beforeEach(async () => {
    workspace = await makeTempDir();
    store = createMemoryEventStore();
    state.release = false;
    state.runs = {};
  });
  afterEach(() => workspace.remove());

  const harness = (tool: string) =>
    createRein({
      store,
      workspace: workspace.path,
      provider: createScriptedProvider(parseScript({ turns: [{ text: 'Calling.', toolCalls: [{ name: `mcp__waiting__${tool}`, arguments: {} }] }, { text: 'Done.' }] })),
      skills: false,
      permissions: { approveAll: true },
      mcpServers: { waiting: { type: 'in-memory', connect: (transport) => waitingServer(state).connect(transport as never) } },
    });

  const crashDuring = async (tool: string): Promise<string> => {
    const rein = await harness(tool);
    const session = await rein.createSession({ task: 'call it' });
    await session.send('call it');
    // The call reached the server (a read-only tool's tool.started is written only with its result).
    while ((state.runs[tool] ?? 0) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await session.interrupt('simulated crash');
    return session.id;
  };

  it('a read-only tool is run again, after its server started again', async () => {
    const id = await crashDuring('look');
    state.release = true;
    const { session, report } = await (await harness('look')).resumeSession(id);
    expect(report.resolutions).toEqual([expect.objectContaining({ kind: 'executeTool', policy: 'rerun-after-check', resolution: 'rerun' })]);
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(state.runs.look).toBe(2);
    const records = await store.read(id);
    expect(flattenRecords(records).filter((record) => record.type === 'mcp.started')).toHaveLength(2);
    expect(flattenRecords(records).filter((record) => record.type === 'actor.transitioned' && record.actor === 'root/mcp/waiting').map((record) => (record.data as { to: string }).to)).toEqual(['connecting', 'ready', 'connecting', 'ready']);
    expect(verifyRecords(id, records).verified).toBeGreaterThan(0);
  });

  it('a server no longer configured is closed on resume, and its tools leave the next visible set', async () => {
    const id = await crashDuring('look');
    state.release = true;
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [{ text: 'Calling.', toolCalls: [{ name: 'mcp__waiting__look', arguments: {} }] }, { text: 'Done.' }] })), skills: false, permissions: { approveAll: true } });
    const { session } = await rein.resumeSession(id);
    await session.whenQuiet();
    const records = await store.read(id);
    expect(flattenRecords(records).find((record) => record.type === 'mcp.closed')?.data).toEqual({ server: 'waiting', reason: 'no longer configured' });
    const last = flattenRecords(records).filter((record) => record.type === 'capability.diff').at(-1)!.data as { removed: Array<{ name: string; reason: string }> };
    expect(last.removed).toEqual(expect.arrayContaining([{ name: 'mcp__waiting__look', reason: 'server-unavailable' }]));
    expect(verifyRecords(id, records).verified).toBeGreaterThan(0);
  });

  it('a tool that may change things waits for confirmation, and runs again only when confirmed', async () => {
    const id = await crashDuring('change');
    state.release = true;
    const first = await (await harness('change')).resumeSession(id);
    expect(first.report.resolutions).toEqual([expect.objectContaining({ policy: 'require-user-confirmation', resolution: 'awaiting-confirmation' })]);
    expect((await first.session.whenQuiet()).status).toBe('paused');
    expect(state.runs.change).toBe(1);
    await first.session.release();
    const confirmed = await (await harness('change')).resumeSession(id, { confirmInDoubt: true });
    expect(confirmed.report.resolutions).toEqual([expect.objectContaining({ resolution: 'rerun' })]);
    expect((await confirmed.session.whenQuiet()).status).toBe('completed');
    expect(state.runs.change).toBe(2);
  });
});
