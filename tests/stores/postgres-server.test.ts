import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lastValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, submitSession } from '../../src/index.js';
import type { PostgresEventStore } from '../../src/index.js';
import { replaySession } from '../../src/session/replay-session.js';
import { startPostgresCluster, type PostgresCluster } from '../../src/testing/postgres-cluster.js';
import { drafts } from './store-test-support.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { makeTempDir } from '../support/temp-dir.js';
import { startWorkerProcess } from '../support/worker-process.js';

const builtStores = new URL('../../dist/stores/index.js', import.meta.url).href;

/** A process that opens the store, waits for a line on stdin, appends `count` records at `expectedSeq`, and says how it went. */
const APPENDER = `
const { openPostgresEventStore } = await import(process.env.STORES);
const store = await openPostgresEventStore(process.env.STORE_URL);
const drafts = Array.from({ length: 3 }, (_, i) => ({ id: process.env.NAME + '-' + i, type: 'test.recorded', v: 1, at: 1, actor: 'root', data: { i } }));
process.stdout.write('ready\\n');
process.stdin.once('data', async () => {
  const outcome = await store.append('s', drafts, { expectedSeq: 5 }).then(() => 'won', (error) => error.code);
  process.stdout.write(outcome + '\\n');
  await store.close();
});
`;

const appender = (name: string, url: string) => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', APPENDER], { env: { ...process.env, STORES: builtStores, STORE_URL: url, NAME: name }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const lines = (count: number) =>
    new Promise<string[]>((resolve) => {
      const check = () => {
        const done = out.split('\n').filter(Boolean);
        if (done.length >= count) resolve(done);
      };
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        check();
      });
      check();
    });
  return { child, lines };
};

describePostgres('PostgreSQL store across processes and restarts', () => {
  let cluster: PostgresCluster;
  const stores: PostgresEventStore[] = [];
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await cluster.stop();
  });

  it('lets exactly one of two processes appending at the same expected seq win', async () => {
    const url = freshSchemaUrl(cluster.url);
    const store = await openPostgresEventStore(url);
    stores.push(store);
    await store.append('s', drafts(1, 5), { expectedSeq: 0 });
    const left = appender('left', url);
    const right = appender('right', url);
    await Promise.all([left.lines(1), right.lines(1)]);
    left.child.stdin.write('go\n');
    right.child.stdin.write('go\n');
    const outcomes = [(await left.lines(2))[1], (await right.lines(2))[1]].sort();
    expect(outcomes).toEqual(['STORE_CONFLICT', 'won']);
    const records = await store.read('s');
    expect(records.map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const winner = records[5]!.id.split('-')[0];
    expect(records.slice(5).map((record) => record.id)).toEqual([0, 1, 2].map((index) => `${winner}-${index}`));
  });

  it('keeps appending and tailing across a server restart, and a worker finishes its session', async () => {
    const url = freshSchemaUrl(cluster.url);
    const store = await openPostgresEventStore(url);
    stores.push(store);
    const workspace = await makeTempDir('rein-pg-restart-');
    try {
      const tailed = lastValueFrom(store.tail('t').pipe(take(6), toArray()));
      await store.append('t', drafts(1, 3), { expectedSeq: 0 });
      const sessionId = await submitSession(store, {
        sessionId: 's-restart',
        task: 'count three times',
        workspace: workspace.path,
        provider: { name: 'scripted', source: 'inline' },
        script: { turns: [1, 2, 3].map((turn) => ({ text: `turn ${turn}`, toolCalls: [{ name: 'count', arguments: { label: String(turn) } }] })).concat([{ text: 'done', toolCalls: [] }]) },
        permissions: { approveAll: true },
        sandbox: {},
        budgets: {},
        confirmInDoubt: false,
      });
      const worker = startWorkerProcess({ name: 'worker-r', storeUrl: url, leaseMs: 20_000, toolMs: 1_000 });
      try {
        await worker.waitFor((event) => event.type === 'claimed');
        const countFile = join(workspace.path, 'count.txt');
        while (!(await readFile(countFile, 'utf8').catch(() => '')).includes('1')) await new Promise((resolve) => setTimeout(resolve, 50));
        await cluster.restart();
        await store.append('t', drafts(4, 3), { expectedSeq: 3 });
        expect((await tailed).map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await worker.waitFor((event) => event.type === 'finished')).toMatchObject({ sessionId, detail: 'completed' });
        expect((await readFile(countFile, 'utf8')).trim().split('\n')).toEqual(['worker-r 1', 'worker-r 2', 'worker-r 3']);
        await expect(replaySession(store, sessionId)).resolves.toMatchObject({ head: await store.head(sessionId) });
      } finally {
        worker.child.kill('SIGKILL');
      }
    } finally {
      await workspace.remove();
    }
  });
});
