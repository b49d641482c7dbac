import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinTools, createMemoryEventStore, createRein, createScriptedProvider, parseScript } from '../../src/index.js';
import type { EventStore } from '../../stores/event-store.js';
import { editTool } from '../../src/tools/edit.tool.js';
import type { AnyToolDefinition, ToolContext } from '../../src/tools/tool.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { toolCalls: [{ name: 'edit', arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' } }] },
    { text: 'Done.' },
  ],
};

/** The real edit tool, held up (until the session is interrupted) before or after it changes the file; `held` tells when it waits. */
const heldEdit = (when: 'before' | 'after', held: () => void): AnyToolDefinition => {
  const hold = (context: ToolContext) =>
    new Promise<never>((_, reject) => {
      context.signal.addEventListener('abort', () => reject(new Error('interrupted')), { once: true });
      held();
    });
  return {
    ...editTool,
    async execute(args: never, context: ToolContext, plan: never) {
      if (when === 'before') await hold(context);
      await editTool.execute(args, context, plan);
      return hold(context);
    },
  };
};

const rein = (store: EventStore, workspace: string, tools?: AnyToolDefinition[]) =>
  createRein({ store, workspace, provider: createScriptedProvider(parseScript(script)), permissions: { mode: 'accept-edits' }, tools: tools ?? builtinTools() });

/** Run until the edit has started (its tool.started is durable) and is held, then interrupt the process's session. */
const crashDuringEdit = async (store: EventStore, workspace: string, when: 'before' | 'after') => {
  let reachedHold!: () => void;
  const holding = new Promise<void>((resolve) => (reachedHold = resolve));
  const harness = await rein(store, workspace, builtinTools().map((tool) => (tool.name === 'edit' ? heldEdit(when, reachedHold) : tool)));
  const session = await harness.createSession({ task: 'edit' });
  const started = firstValueFrom(session.records$.pipe(filter((record) => record.type === 'tool.started' && (record.data as { name: string }).name === 'edit')));
  await session.send('edit');
  await started;
  await holding;
  await session.interrupt('simulated crash');
  return session.id;
};

describe('resuming an edit that was in doubt', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let store: EventStore;
  const file = () => join(dir.path, 'a.txt');
  beforeEach(async () => {
    dir = await makeTempDir('rein-edit-resume-');
    await writeFile(file(), 'alpha\n');
    store = createMemoryEventStore();
  });
  afterEach(() => dir.remove());

  it('settles from the file when the edit is already there', async () => {
    const id = await crashDuringEdit(store, dir.path, 'after');
    expect(await readFile(file(), 'utf8')).toBe('ALPHA\n');
    const { session, report } = await (await rein(store, dir.path)).resumeSession(id);
    expect(report.resolutions).toEqual([expect.objectContaining({ kind: 'executeTool', policy: 'rerun-after-check', resolution: 'settled-from-log' })]);
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(await readFile(file(), 'utf8')).toBe('ALPHA\n');
    const settled = (await store.read(id)).filter((record) => record.type === 'tool.settled').at(-1)!;
    expect(settled.data).toMatchObject({ name: 'edit', status: 'ok' });
  });

  it('reruns when the file still has the content the edit was checked against', async () => {
    const id = await crashDuringEdit(store, dir.path, 'before');
    expect(await readFile(file(), 'utf8')).toBe('alpha\n');
    const { session, report } = await (await rein(store, dir.path)).resumeSession(id);
    expect(report.resolutions).toEqual([expect.objectContaining({ resolution: 'rerun' })]);
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(await readFile(file(), 'utf8')).toBe('ALPHA\n');
  });

  it('asks for confirmation when the file is neither, and a confirmed rerun meets the stale baseline', async () => {
    const id = await crashDuringEdit(store, dir.path, 'before');
    await writeFile(file(), 'someone else wrote this\n');
    const paused = await (await rein(store, dir.path)).resumeSession(id);
    expect(paused.report.resolutions).toEqual([expect.objectContaining({ resolution: 'awaiting-confirmation' })]);
    expect((await paused.session.whenQuiet()).status).toBe('paused');
    await paused.session.interrupt('user looks first');
    const confirmed = await (await rein(store, dir.path)).resumeSession(id, { confirmInDoubt: true });
    expect(confirmed.report.resolutions).toEqual([expect.objectContaining({ resolution: 'rerun' })]);
    expect((await confirmed.session.whenQuiet()).status).toBe('completed');
    expect(await readFile(file(), 'utf8')).toBe('someone else wrote this\n');
    const settled = (await store.read(id)).filter((record) => record.type === 'tool.settled').at(-1)!;
    expect(settled.data).toMatchObject({ name: 'edit', status: 'error', errorCode: 'InvalidInput' });
  });
});
