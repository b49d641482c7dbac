import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/index.js';
import type { AppendOptions } from '../../stores/event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * Who decides durability: a step's batch leaves it to the store (fsynced per step by default, group-committed in
 * relaxed mode), while a mutating tool's intent (`tool.started`) is always forced to disk before the tool runs.
 */
describe('the host\'s durability requests', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir('rein-durability-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
  });
  afterEach(() => dir.remove());

  it('steps leave durability to the store\'s mode; a mutating tool\'s intent always asks for a sync', async () => {
    const store = createMemoryEventStore();
    const appends: Array<{ types: string[]; sync: AppendOptions['sync'] }> = [];
    const append = store.append.bind(store);
    store.append = (stream, records, options) => {
      appends.push({ types: records.map((record) => record.type), sync: options.sync });
      return append(stream, records, options);
    };
    const script = parseScript({
      turns: [
        { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
        { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'bee\n' } }] },
        { text: 'Done.' },
      ],
    });
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider(script), permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: 'write b.txt' });
    expect((await session.whenQuiet()).status).toBe('completed');
    const steps = appends.filter((entry) => entry.types.some((type) => type === 'model.responded' || type === 'tool.settled' || type === 'user.message'));
    expect(steps.length).toBeGreaterThanOrEqual(5);
    for (const step of steps) expect(step.sync, step.types.join(',')).toBeUndefined();
    const intents = appends.filter((entry) => entry.types.includes('tool.started') && !entry.types.includes('tool.settled'));
    expect(intents).toEqual([expect.objectContaining({ sync: true })]);
  });
});
