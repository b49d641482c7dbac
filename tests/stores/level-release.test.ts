import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { drafts, expectCode, temporaryDirectory } from './store-test-support.js';

let root: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  root = await temporaryDirectory('rein-level-release-');
});
afterEach(() => root.remove());

describe('LevelEventStore.release', () => {
  it('lets go of a stream\'s database so another holder can write it, and reopens it on the next use', async () => {
    const first = await openLevelEventStore(root.path);
    const second = await openLevelEventStore(root.path);
    try {
      await first.append('shared', drafts(1, 2), { expectedSeq: 0 });
      await expectCode(second.append('shared', drafts(3, 1), { expectedSeq: 2 }), 'STORE_LOCKED');
      await first.release('shared');
      await second.append('shared', drafts(3, 1), { expectedSeq: 2 });
      expect((await first.read('shared')).map((record) => record.seq)).toEqual([1, 2, 3]);
      await second.release('shared');
      await first.append('shared', drafts(4, 1), { expectedSeq: 3 });
      await first.release('shared');
      expect(await second.head('shared')).toBe(4);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('waits for operations in flight: the database closes when the last one ends', async () => {
    const first = await openLevelEventStore(root.path);
    const second = await openLevelEventStore(root.path);
    try {
      await first.append('shared', drafts(1, 50), { expectedSeq: 0 });
      const reading = first.read('shared');
      const released = first.release('shared');
      expect((await reading).length).toBe(50);
      await released;
      await second.append('shared', drafts(51, 1), { expectedSeq: 50 });
      expect(await first.head('shared')).toBe(51);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('is a no-op for an unknown stream and on a read-only store', async () => {
    const store = await openLevelEventStore(root.path);
    await store.release('nothing-here');
    await store.close();
    const readOnly = await openLevelEventStore(root.path, { readOnly: true });
    await readOnly.release('nothing-here');
    await readOnly.close();
  });
});

describe('LevelEventStore.hold', () => {
  it('takes the stream\'s lock for this store (STORE_LOCKED while another holds it), keeps it past eviction, and lets go when the last hold ends', async () => {
    const first = await openLevelEventStore(root.path, { maxOpenStreams: 1 });
    const second = await openLevelEventStore(root.path);
    try {
      await first.append('held', drafts(1, 2), { expectedSeq: 0 });
      await first.release('held');
      const held = await second.hold('held');
      await expectCode(first.hold('held'), 'STORE_LOCKED');
      await held();
      await second.release('held');
      const once = await first.hold('held');
      const twice = await first.hold('held');
      // Other streams pass through this one-stream pool: the held one is never closed to make room.
      for (const other of ['a', 'b', 'c']) await first.append(other, drafts(1, 1), { expectedSeq: 0 });
      await expectCode(second.hold('held'), 'STORE_LOCKED');
      await expectCode(second.append('held', drafts(3, 1), { expectedSeq: 2 }), 'STORE_LOCKED');
      expect(await second.head('held')).toBe(2);
      await once();
      await once();
      for (const other of ['d', 'e']) await first.append(other, drafts(1, 1), { expectedSeq: 0 });
      await expectCode(second.hold('held'), 'STORE_LOCKED');
      await twice();
      // No hold left: the next streams evict it, and its lock is free.
      for (const other of ['f', 'g']) await first.append(other, drafts(1, 1), { expectedSeq: 0 });
      await second.hold('held');
      await second.hold('missing-stream');
      await second.append('held', drafts(3, 1), { expectedSeq: 2 });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('is refused on a read-only store', async () => {
    const store = await openLevelEventStore(root.path, { readOnly: true });
    await expectCode(store.hold('held'), 'STORE_READ_ONLY');
    await store.close();
  });
});

describe('a session\'s hold of its LevelDB stream', () => {
  it('is taken at creation (another store cannot hold or resume it meanwhile) and ends with release() or with the session', async () => {
    const { createRein, createScriptedProvider, parseScript, openLevelEventStore: open } = await import('../../src/index.js');
    const workspace = await temporaryDirectory('rein-hold-workspace-');
    // One open stream at most: a stream no longer held is closed as soon as another one is used.
    const store = await open(root.path, { maxOpenStreams: 1 });
    const other = await open(root.path);
    /** Hold `stream` from the other store once this one's pool has closed it (closing an evicted database is not awaited). */
    const holdOnceFree = async (stream: string) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await other.hold(stream);
        } catch (error) {
          if ((error as { code?: string }).code !== 'STORE_LOCKED' || attempt >= 1000) throw error;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    };
    try {
      const provider = createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] }));
      const rein = await createRein({ store, workspace: workspace.path, provider, memory: false });
      const paused = await rein.createSession({ task: 'wait' });
      await store.append('elsewhere-1', drafts(1, 1), { expectedSeq: 0 });
      await expectCode(other.hold(paused.id), 'STORE_LOCKED');
      await expectCode(createRein({ store: other, workspace: workspace.path, provider, memory: false }).then((again) => again.resumeSession(paused.id)), 'STORE_LOCKED');
      await paused.release();
      await store.append('elsewhere-2', drafts(1, 1), { expectedSeq: 0 });
      await (await holdOnceFree(paused.id))();
      await other.release(paused.id);

      const ended = await rein.startSession({ task: 'answer' });
      const quiet = await ended.whenQuiet();
      expect(quiet.status, JSON.stringify(quiet)).toBe('completed');
      await store.append('elsewhere-3', drafts(1, 1), { expectedSeq: 0 });
      await holdOnceFree(ended.id);
      await rein.close();
    } finally {
      await other.close();
      await store.close();
      await workspace.remove();
    }
  });
});
