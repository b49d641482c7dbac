import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, PostgresSessionQueue, submitSession } from '../../src/index.js';
import type { PostgresEventStore } from '../../src/index.js';
import { replaySession } from '../../src/session/replay-session.js';
import { entriesOfRows, jsonLines, startCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';

const SESSIONS = 50;
const KILLS = 12;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describePostgres('workers killed at random points', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let store: PostgresEventStore;
  let url: string;
  const running = new Set<ChildProcess>();

  beforeAll(async () => {
    workspace = await makeTempDir('rein-worker-crash-');
    await mkdir(join(workspace.path, 'out'));
    url = freshSchemaUrl();
    store = await openPostgresEventStore(url);
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    await store.close();
    await workspace.remove();
  });

  it('completes each of 50 sessions exactly once across 3 workers under SIGKILL, losing no committed record', async () => {
    const ids: string[] = [];
    for (let index = 0; index < SESSIONS; index++) {
      ids.push(
        await submitSession(store, {
          sessionId: `s-crash-${index}`,
          task: `session ${index}`,
          workspace: workspace.path,
          provider: { name: 'scripted', source: 'inline' },
          script: {
            turns: [
              { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: `out/s${index}.txt`, content: `session ${index}\n` } }] },
              { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: `out/s${index}.txt` } }] },
              { text: 'Done.' },
            ],
          },
          permissions: { approveAll: true },
          sandbox: {},
          budgets: {},
          confirmInDoubt: false,
        }),
      );
    }
    // Each worker's sessions in hand (claimed, not yet finished or handed back), from its --json lines.
    const inHand = new Map<ChildProcess, Set<string>>();
    const startWorker = () => {
      const child = startCli(['worker', '--store', url, '--concurrency', '2', '--lease-ms', '1000', '--json'], { cwd: workspace.path });
      const held = new Set<string>();
      inHand.set(child, held);
      let pending = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (pending + chunk.toString('utf8')).split('\n');
        pending = lines.pop()!;
        for (const event of jsonLines(lines.join('\n'))) {
          if (event.type === 'claimed') held.add(String(event.sessionId));
          else if (typeof event.sessionId === 'string') held.delete(event.sessionId);
        }
      });
      running.add(child);
      child.on('close', () => running.delete(child));
      return child;
    };
    const workers = [startWorker(), startWorker(), startWorker()];
    // Follow the global order while the workers run: every record seen here was committed and must survive.
    const seen = new Map<string, string>();
    let cursor: string | undefined;
    const follow = async () => {
      for (;;) {
        const page = await store.readAll({ ...(cursor === undefined ? {} : { after: cursor }), limit: 500 });
        for (const { position, record } of page) {
          seen.set(`${record.stream}#${record.seq}`, record.id);
          cursor = position;
        }
        if (page.length < 500) return;
      }
    };
    const queue = new PostgresSessionQueue(store);
    let kills = 0;
    while (kills < KILLS && (await queue.counts()).done < SESSIONS) {
      await sleep(100 + Math.random() * 400);
      await follow();
      // Kill a worker while it holds a session, so the kill lands mid-work however slowly the workers start.
      const busy = workers.flatMap((worker, index) => ((inHand.get(worker)?.size ?? 0) > 0 ? [index] : []));
      if (busy.length === 0) continue;
      const victim = busy[Math.floor(Math.random() * busy.length)]!;
      workers[victim]!.kill('SIGKILL');
      workers[victim] = startWorker();
      kills++;
    }
    const deadline = Date.now() + 120_000;
    while ((await queue.counts()).done < SESSIONS && Date.now() < deadline) {
      await follow();
      await sleep(200);
    }
    await follow();
    expect(kills).toBeGreaterThanOrEqual(Math.min(KILLS, 1));
    expect(await queue.counts()).toMatchObject({ done: SESSIONS, queued: 0, running: 0, parked: 0 });
    // The kills landed mid-work: sessions were taken over (claimed again with a higher epoch) and still ended once.
    const entries = await Promise.all(ids.map((id) => queue.entry(id)));
    expect(entries.filter((entry) => (entry?.claims ?? 0) > 1).length).toBeGreaterThan(0);
    for (const id of ids) {
      const records = await store.read(id);
      expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
      const ended = entriesOfRows(records).filter((record) => record.type === 'session.ended' && record.actor === 'root');
      expect(ended.map((record) => (record.data as { status: string }).status)).toEqual(['completed']);
      await expect(replaySession(store, id)).resolves.toMatchObject({ head: records.length });
      for (const record of records) {
        const key = `${record.stream}#${record.seq}`;
        if (seen.has(key)) expect(seen.get(key)).toBe(record.id);
        seen.delete(key);
      }
    }
    // Whatever readAll saw of the sessions is still there with the same ids (the memory stream may have moved on).
    const lost = [...seen.keys()].filter((key) => ids.some((id) => key.startsWith(`${id}#`)));
    expect(lost).toEqual([]);
  });
});
