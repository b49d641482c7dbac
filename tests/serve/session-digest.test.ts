import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/index.js';
import { forkSession } from '../../src/session/fork-session.js';
import { DigestCache } from '../../src/serve/session-digest.js';
import { runScriptedSession } from '../../src/testing/run-scripted.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('the viewer digest: a session’s time', () => {
  it('counts a fork’s (or a new attempt’s) own records, from its session.forked, not from the parent’s first record', async () => {
    const workspace = await makeTempDir('rein-digest-');
    try {
      const store = createMemoryEventStore();
      // The parent runs at t = 1,000,000 ms, one second a record; the fork is made four minutes after it ended.
      let now = 1_000_000;
      const run = await runScriptedSession({ store, workspace: workspace.path, script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: '.' } }] }, { text: 'Done.' }] }, clock: () => (now += 1_000) });
      await run.rein.close();
      const parentHead = await store.head(run.session.id);
      const digests = new DigestCache(store);
      const parent = (await digests.get(run.session.id))!;
      expect(parent.lastAt - parent.firstAt).toBeGreaterThan(0);
      const forkId = await forkSession(store, run.session.id, parentHead, { clock: () => now + 240_000 });
      const fork = (await digests.get(forkId))!;
      // Never ran: no time at all (it showed 3 min 55 s).
      expect(fork.lastAt - fork.firstAt).toBe(0);
      expect(fork.firstAt).toBe(now + 240_000);
    } finally {
      await workspace.remove();
    }
  });
});
