import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { defaultSandboxPolicy } from '../../src/policy/sandbox-policy.js';
import { SessionToolState } from '../../src/tools/session-tool-state.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { runToolPipeline, type PipelineEnvironment } from '../../src/tools/tool-pipeline.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { Workspace } from '../../src/tools/workspace.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A read-only tool that settles only when its signal aborts (saying why), or never (`stuck`). */
const waiting = (name: string, options: { timeoutMs?: number; stuck?: boolean; seen: AbortSignal[] }) =>
  defineTool({
    name,
    description: 'Waits for its signal.',
    parameters: z.object({}).strict(),
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: (_input, context) => {
      options.seen.push(context.signal);
      if (options.stuck) return new Promise(() => {});
      return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve({ ok: true, output: `stopped: ${String((context.signal.reason as Error | undefined)?.message ?? context.signal.reason)}` }), { once: true }));
    },
  });

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-tool-timeout-');
});
afterAll(() => workspace.remove());

const environmentWith = async (tools: ReturnType<typeof waiting>[]): Promise<PipelineEnvironment> => {
  const policy = new PermissionPolicy({ approveAll: true });
  return { registry: new ToolRegistry(tools), policy, visibility: (tool) => policy.visibility(tool), state: new SessionToolState(), workspace: await Workspace.open(workspace.path), blobs: createMemoryEventStore().blobs, sandbox: { ...defaultSandboxPolicy, loginShell: false } };
};

const run = (environment: PipelineEnvironment, name: string, signal: AbortSignal, abandonGraceMs?: number) =>
  runToolPipeline(environment, { effectId: 'root:e1', callId: 'c1', actor: 'root', name, arguments: {} }, { sessionId: 's', signal, now: Date.now, persist: async () => {}, progress: () => {}, ...(abandonGraceMs === undefined ? {} : { abandonGraceMs }) });

describe('a tool run within its timeout and its cancellation grace', () => {
  it('settles Timeout when the tool does not finish in time, and the tool is told to stop', async () => {
    const seen: AbortSignal[] = [];
    const environment = await environmentWith([waiting('slow', { timeoutMs: 20, seen })]);
    const outcome = await run(environment, 'slow', new AbortController().signal, 5_000);
    expect(outcome.kind === 'settled' && outcome.outcome).toMatchObject({ status: 'error', errorCode: 'Timeout' });
    expect(seen[0]!.aborted).toBe(true);
  });

  it('forwards the session\'s abort (with its reason) to a tool that has a timeout', async () => {
    const seen: AbortSignal[] = [];
    const environment = await environmentWith([waiting('slow', { timeoutMs: 60_000, seen })]);
    const controller = new AbortController();
    const pending = run(environment, 'slow', controller.signal, 5_000);
    await expect.poll(() => seen.length).toBe(1);
    controller.abort(new Error('the wall-time budget ran out'));
    const outcome = await pending;
    expect(outcome.kind === 'settled' && outcome.outcome).toMatchObject({ status: 'ok', observation: 'stopped: the wall-time budget ran out' });
  });

  it('gives a tool already cancelled an aborted signal', async () => {
    const seen: AbortSignal[] = [];
    const environment = await environmentWith([waiting('slow', { timeoutMs: 60_000, seen })]);
    const controller = new AbortController();
    controller.abort(new Error('closed'));
    const outcome = await run(environment, 'slow', controller.signal);
    // A cancelled call does not start at all; the signal the pipeline would hand on is aborted either way.
    expect(outcome.kind === 'settled' && outcome.outcome.status).toBe('error');
  });

  it('abandons a tool that ignores its cancellation for longer than the grace (with or without a timeout)', async () => {
    for (const timeoutMs of [undefined, 60_000]) {
      const seen: AbortSignal[] = [];
      const environment = await environmentWith([waiting('stuck', { ...(timeoutMs === undefined ? {} : { timeoutMs }), stuck: true, seen })]);
      const controller = new AbortController();
      const pending = run(environment, 'stuck', controller.signal, 20);
      await expect.poll(() => seen.length).toBe(1);
      controller.abort();
      const outcome = await pending;
      expect(outcome.kind === 'settled' && outcome.outcome).toMatchObject({ status: 'error', errorCode: 'Cancelled' });
      expect(seen[0]!.aborted).toBe(true);
      // Without a timeout the tool is handed the session's own signal.
      if (timeoutMs === undefined) expect(seen[0]).toBe(controller.signal);
    }
  });
});
