import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore } from 'rein/testing';
import { rebuildContextView, rebuildMemoryView, rebuildTraceView } from '../../src/projections/rebuild.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-views-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
});
afterEach(() => workspace.remove());

describe('the session handle exposes the three views', () => {
  it('context$, trace$ and memory$ follow the session live and equal the rebuilt views at the end', async () => {
    const store = createMemoryEventStore();
    const script = { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Done.' }] };
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)) });
    const session = await rein.createSession({ task: 'Read a.txt. Never write anything.' });
    const contexts: number[] = [];
    const subscription = session.context$.subscribe((view) => contexts.push(view.seq));
    await session.send('Read a.txt. Never write anything.');
    const result = await session.whenQuiet();
    const records = await store.read(session.id);
    const [context, trace, memory] = await Promise.all([
      firstValueFrom(session.context$.pipe(filter((view) => view.seq === result.head))),
      firstValueFrom(session.trace$.pipe(filter((view) => view.seq === result.head))),
      firstValueFrom(session.memory$.pipe(filter((views) => views.session.seq === result.head))),
    ]);
    subscription.unsubscribe();
    expect(context).toEqual(rebuildContextView(records));
    expect(trace).toEqual(rebuildTraceView(records));
    expect(memory.session).toEqual(rebuildMemoryView(records));
    expect(memory.governance).toEqual(rebuildMemoryView(await store.read('memory')));
    // The current view first (the log as it was when the view was first read), then one view per appended record.
    expect(contexts[0]).toBeGreaterThanOrEqual(1);
    expect(contexts).toEqual(records.slice(contexts[0]! - 1).map((record) => record.seq));
    expect(context.actors.get('root')?.constraints?.head.text).toBe('Never write anything.');
    expect(trace.ended?.status).toBe('completed');
  });
});
