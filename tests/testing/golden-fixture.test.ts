import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, readLogFixture, runScriptedSession, sequentialIds, verifyRecords, writeLogFixture, type ScriptInput } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-golden-fixture-');
  await writeFile(join(workspace.path, 'notes.txt'), 'one\ntwo\n');
});
afterAll(() => workspace.remove());

const script: ScriptInput = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }, { name: 'list_dir', arguments: { path: '.' } }] },
    { text: 'It has two lines.' },
  ],
};

/** A clock that starts at a fixed instant and moves 1 ms per reading. */
const steppingClock = () => {
  let now = Date.UTC(2026, 0, 1);
  return () => now++;
};

const run = () =>
  runScriptedSession({ script, workspace: workspace.path, clock: steppingClock(), seed: 'golden', sessionId: 's-golden-1', rein: { random: () => 0.5 } });

describe('golden logs from outside the repository (issue 30 item 24)', () => {
  it('two runs with a fixed clock, a seed and a session id write identical records, and the fixture helpers round-trip them', async () => {
    const first = await run();
    const second = await run();
    expect(first.result.status).toBe('completed');
    expect(first.session.id).toBe('s-golden-1');
    expect(first.records[0]?.id).toBe('golden-0');
    const differing = first.records.flatMap((record, index) => (JSON.stringify(record) === JSON.stringify(second.records[index]) ? [] : [[JSON.stringify(record), JSON.stringify(second.records[index])]]));
    expect(differing).toEqual([]);

    const text = await writeLogFixture(first.store, first.session.id);
    expect(await writeLogFixture(second.store, second.session.id)).toBe(text);
    expect(text.split('\n')[0]).toBe(JSON.stringify({ fixture: 1, stream: 's-golden-1' }));
    // Read back into a fresh store: the same records, with their blobs, and the log replays exactly.
    const store = createMemoryEventStore();
    const fixture = await readLogFixture(store, text, 'golden.ndjson');
    expect(fixture.records).toHaveLength(first.records.length);
    expect(await store.read('s-golden-1')).toEqual(first.records);
    expect(verifyRecords('s-golden-1', await store.read('s-golden-1')).head).toBe(first.records.length);
    await expect(readLogFixture(createMemoryEventStore(), 'not json\n', 'bad.ndjson')).rejects.toThrow('bad.ndjson:1');
    await first.rein.close();
    await second.rein.close();
  });

  it('sequentialIds gives the same ids for the same seed', () => {
    const a = sequentialIds(7);
    const b = sequentialIds(7);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    expect(sequentialIds('x')()).toBe('x-0');
  });
});
