import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, PostgresSessionQueue, submitSession } from '../../src/index.js';
import type { PostgresEventStore } from '../../src/index.js';
import { replaySession } from '../../src/session/replay-session.js';
import { makeTempDir } from '../support/temp-dir.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { entriesOfRows } from '../support/cli.js';

const waitUntil = async (condition: () => Promise<boolean>): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
};

describePostgres('leased workers', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let store: PostgresEventStore;
  let url: string;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    workspace = await makeTempDir('rein-fencing-');
    url = freshSchemaUrl();
    store = await openPostgresEventStore(url);
  });
  afterAll(async () => {
    for (const worker of workers) {
      worker.child.kill('SIGCONT');
      worker.child.kill('SIGKILL');
    }
    await store.close();
    await workspace.remove();
  });

  it('fences a paused worker: the second finishes, the first is refused with STORE_FENCED, no effect ran twice', async () => {
    const sessionId = await submitSession(store, {
      sessionId: 's-fencing',
      task: 'count once',
      workspace: workspace.path,
      provider: { name: 'scripted', source: 'inline' },
      script: { turns: [{ text: 'Counting.', toolCalls: [{ name: 'count', arguments: { label: 'once' } }] }, { text: 'Counted.' }] },
      permissions: { approveAll: true },
      sandbox: {},
      budgets: {},
      confirmInDoubt: false,
    });
    const first = startWorkerProcess({ name: 'worker-a', storeUrl: url, leaseMs: 1_500, toolMs: 3_000 });
    workers.push(first);
    await first.waitFor((event) => event.type === 'claimed');
    const countFile = join(workspace.path, 'count.txt');
    await waitUntil(async () => (await readFile(countFile, 'utf8').catch(() => '')).includes('worker-a'));
    first.child.kill('SIGSTOP');

    const second = startWorkerProcess({ name: 'worker-b', storeUrl: url, leaseMs: 1_500 });
    workers.push(second);
    const taken = await second.waitFor((event) => event.type === 'claimed');
    expect(taken).toMatchObject({ sessionId, epoch: 2 });
    expect(await second.waitFor((event) => event.type === 'finished')).toMatchObject({ sessionId, detail: 'completed' });

    first.child.kill('SIGCONT');
    const fenced = await first.waitFor((event) => event.type === 'fenced');
    expect(fenced).toMatchObject({ sessionId, epoch: 1 });
    expect(fenced.detail).toMatch(/STORE_FENCED/);

    expect((await readFile(countFile, 'utf8')).trim().split('\n')).toEqual(['worker-a once']);
    const records = await store.read(sessionId);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    const resolved = entriesOfRows(records).find((record) => record.type === 'effect.resolved');
    expect(resolved?.data).toMatchObject({ resolution: 'failed-in-doubt' });
    // The log ends on the last step's derived records (session.ended, or the transition after it), entries of its step record.
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: expect.stringMatching(/session\.ended|actor\.transitioned/) });
    expect(entriesOfRows(records).some((record) => record.type === 'session.ended' && (record.data as { status: string }).status === 'completed')).toBe(true);
    await expect(replaySession(store, sessionId)).resolves.toMatchObject({ verified: records.length });
    const entry = await new PostgresSessionQueue(store).entry(sessionId);
    expect(entry).toMatchObject({ state: 'done', claims: 2 });
    expect(entry?.lease).toBeUndefined();
  });
});
