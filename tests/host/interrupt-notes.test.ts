import { existsSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryEventStore, createRein, createScriptedProvider, defineTool, flattenRecords, type EventStore } from 'rein';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-interrupt-notes-');
});
afterAll(() => workspace.remove());

/**
 * A host tool that, like `bash`, checks the protected paths as it stops: once aborted it takes a moment (the injected
 * delay), removes the `.mcp.json` planted meanwhile and says so in a `workspace.cleaned` note of its (dropped) result.
 */
const checkingTool = (root: string) => {
  const events: string[] = [];
  // The stop takes until the interrupt returned (an interrupt that does not wait for it) or 300 ms, well within the
  // abandon grace period (an interrupt that waits for it).
  let interruptReturned: Promise<unknown> = new Promise(() => undefined);
  const whenInterruptReturned = (promise: Promise<unknown>) => (interruptReturned = promise);
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({
    name: 'guarded',
    description: 'Runs until stopped, then checks the protected paths.',
    parameters: z.object({}),
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false, requiresConfirmation: false },
    risk: 'execute',
    sideEffect: 'process',
    resumePolicy: 'never-rerun',
    execute: async (_args, context) => {
      started();
      await new Promise<void>((resolve) => (context.signal.aborted ? resolve() : context.signal.addEventListener('abort', () => resolve(), { once: true })));
      await Promise.race([interruptReturned, new Promise((resolve) => setTimeout(resolve, 300))]);
      await unlink(join(root, '.mcp.json'));
      events.push('tool returned');
      return { ok: false as const, code: 'Cancelled' as const, message: 'stopped', notes: [{ type: 'workspace.cleaned', data: { paths: ['.mcp.json'], reason: 'protected-path-created' } }] };
    },
  });
  return { tool, running, events, whenInterruptReturned };
};

const callingGuarded = () => createScriptedProvider({ turns: [{ text: 'Calling.', toolCalls: [{ name: 'guarded', arguments: {} }] }, { text: 'Done.' }] });

const entriesOf = async (store: EventStore, id: string) => flattenRecords(await store.read(id));

describe('a call stopped by an interrupt or a cancel: what it did to the workspace is in the log', () => {
  it('interrupt() waits for the stopped call, and its dropped result\'s workspace.cleaned is recorded after session.interrupted', async () => {
    await writeFile(join(workspace.path, '.mcp.json'), '{}\n');
    const { tool, running, events, whenInterruptReturned } = checkingTool(workspace.path);
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: callingGuarded(), tools: [tool], permissions: { approveAll: true }, abandonGraceMs: 10_000 });
    const session = await rein.startSession({ task: 'call it' });
    await running;
    await whenInterruptReturned(session.interrupt('the user pressed Ctrl-C').then(() => events.push('interrupt resolved')));
    expect(events).toEqual(['tool returned', 'interrupt resolved']);
    expect(existsSync(join(workspace.path, '.mcp.json'))).toBe(false);
    const entries = await entriesOf(store, session.id);
    const interrupted = entries.findIndex((entry) => entry.type === 'session.interrupted');
    const cleaned = entries.findIndex((entry) => entry.type === 'workspace.cleaned');
    expect(interrupted).toBeGreaterThan(-1);
    expect(cleaned).toBeGreaterThan(interrupted);
    expect(entries[cleaned]!.data).toMatchObject({ paths: ['.mcp.json'], reason: 'protected-path-created' });
    // The call itself stays in doubt (its settlement is dropped): resume resolves it by policy.
    expect(entries.some((entry) => entry.type === 'tool.settled')).toBe(false);
    expect((await session.whenQuiet()).status).toBe('interrupted');
    await rein.close();
  });

  it('cancel(): the dropped result\'s workspace.cleaned is recorded after session.ended', async () => {
    await writeFile(join(workspace.path, '.mcp.json'), '{}\n');
    const { tool, running } = checkingTool(workspace.path);
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: callingGuarded(), tools: [tool], permissions: { approveAll: true } });
    const session = await rein.startSession({ task: 'call it' });
    await running;
    await session.cancel('enough');
    expect((await session.whenQuiet()).status).toBe('cancelled');
    const entries = await entriesOf(store, session.id);
    const ended = entries.findIndex((entry) => entry.type === 'session.ended');
    const cleaned = entries.findIndex((entry) => entry.type === 'workspace.cleaned');
    expect(ended).toBeGreaterThan(-1);
    expect(cleaned).toBeGreaterThan(ended);
    expect(entries[cleaned]!.data).toMatchObject({ paths: ['.mcp.json'] });
    await rein.close();
  });
});
