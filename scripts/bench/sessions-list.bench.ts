import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventStore } from '../../stores/event-store.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { listSessions } from '../../src/session/session-catalog.js';
import { parseFixture } from '../../src/testing/log-fixture.js';
import { usageOf } from '../../src/projections/usage-summary.js';

/** The same store without its listing cache: every session read each time, as before the cache (the baseline). */
const uncached = (store: EventStore): EventStore => new Proxy(store, {
    get: (target, key) => {
      if (key === 'listingCache') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as EventStore;

const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/**
 * `listSessions` on LevelDB (one database per session) at `counts` sessions, each a copy of a golden log (a session
 * with tools and approvals, 48 records): ms per session for the baseline (every session's database opened and read,
 * no cache), the first listing with the cache (it fills it), a warm listing (nothing changed: one signature per
 * session, no database opened), a warm page of 50, and a listing after 10 sessions changed.
 */
export const main = async (counts: readonly number[] = [200, 2_000]): Promise<void> => {
  process.stdout.write(`sessions list: listSessions on LevelDB · load average ${loadavg()[0]!.toFixed(2)}\n`);
  const fixture = parseFixture(await readFile(fileURLToPath(new URL('../../../tests/fixtures/logs/step-tools-approvals.ndjson', import.meta.url)), 'utf8'));
  for (const count of counts) {
    const directory = await mkdtemp(join(tmpdir(), 'rein-bench-list-'));
    try {
      let store = await openLevelEventStore(join(directory, '.rein'));
      for (let index = 0; index < count; index++) {
        const stream = `s-bench-${String(index).padStart(5, '0')}`;
        const drafts = fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => (draft.type === 'session.created' ? { ...draft, data: { ...(draft.data as object), sessionId: stream } } : draft));
        // With the running usage summary the session host writes with each batch (what the listing prices).
        await store.append(stream, drafts, { expectedSeq: 0, blobs: [...fixture.blobs.values()], summary: usageOf(drafts) });
      }
      await store.close();
      store = await openLevelEventStore(join(directory, '.rein'));
      const baseline = await timed(() => listSessions(uncached(store)));
      const first = await timed(() => listSessions(store));
      const warm = await timed(() => listSessions(store));
      const page = await timed(() => listSessions(store, { limit: 50 }));
      const user = { id: 'late', type: 'user.message', v: 1, at: Date.now(), actor: 'root', data: { text: 'one more' } };
      for (let index = 0; index < 10; index++) {
        const stream = `s-bench-${String(index).padStart(5, '0')}`;
        await store.append(stream, [user], { expectedSeq: await store.head(stream) });
      }
      const changed = await timed(() => listSessions(store));
      // A cold listing of the same store read-only, as `rein sessions` lists (its cache is not written: no file).
      await store.close();
      store = await openLevelEventStore(join(directory, '.rein'), { readOnly: true });
      const readOnly = await timed(() => listSessions(uncached(store)));
      await store.close();
      const per = (ms: number) => `${(ms / count).toFixed(3)} ms/session`;
      process.stdout.write(
        `  ${count} sessions: baseline (no cache) ${per(baseline)} · first listing ${per(first)} · warm ${per(warm)} (${(baseline / warm).toFixed(1)}× faster) · page of 50 ${page.toFixed(1)} ms · 10 changed ${per(changed)} · read-only, no cache (rein sessions) ${per(readOnly)}\n`,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const counts = process.argv.slice(2).map(Number).filter((value) => value > 0);
  await main(counts.length > 0 ? counts : undefined);
}
