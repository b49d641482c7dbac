import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { entriesOfRows, jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { openPostgresEventStore, PostgresSessionQueue, type PostgresEventStore } from '../../src/index.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'HELLO\n' } }] },
    { text: 'Done: out.txt holds the greeting in capitals.' },
  ],
};

describePostgres('rein CLI on a PostgreSQL store', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let url: string;
  let sessionId: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-pg-cli-');
    url = freshSchemaUrl();
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterAll(() => workspace.remove());

  it('runs a scripted session into the database, with nothing written to the workspace store', async () => {
    const run = await runInProcess(['run', 'shout the greeting', '--script', 'script.json', '--approve', 'write', '--store', url], { cwd: workspace.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/completed/);
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
  });

  it('lists, shows, replays and traces the session from the database (REIN_STORE works like --store)', async () => {
    const env = { REIN_STORE: url };
    const [summary] = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env })).stdout);
    expect(summary).toMatchObject({ id: sessionId, status: 'completed', task: 'shout the greeting' });
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'completed'], { cwd: workspace.path, env })).stdout).map((line) => line.id)).toEqual([sessionId]);
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'active'], { cwd: workspace.path, env })).stdout)).toEqual([]);
    const records = jsonLines((await runInProcess(['show', sessionId, '--json'], { cwd: workspace.path, env })).stdout);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    const replay = await runInProcess(['replay', sessionId, '--json'], { cwd: workspace.path, env });
    expect(replay.code).toBe(0);
    expect(jsonLines(replay.stdout)[0]).toMatchObject({ sessionId, verified: records.length });
    const trace = await runInProcess(['trace', sessionId], { cwd: workspace.path, env });
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain('write');
  });

  it('takes the store from rein.config.json, and refuses a password there', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ store: url }));
    const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
    expect(listed.map((line) => line.id)).toEqual([sessionId]);
    const withPassword = new URL(url);
    withPassword.password = 'secret';
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ store: withPassword.toString() }));
    const refused = await runInProcess(['sessions'], { cwd: workspace.path });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('CONFIG_INVALID');
    expect(refused.stderr).not.toContain('secret');
    await writeFile(join(workspace.path, 'rein.config.json'), '{}');
  });

  it('migrates a schema explicitly, idempotently', async () => {
    const fresh = freshSchemaUrl();
    const first = jsonLines((await runInProcess(['store', 'migrate', '--store', fresh, '--json'], { cwd: workspace.path })).stdout)[0];
    expect(first).toMatchObject({ from: 0, to: 6, applied: [1, 2, 3, 4, 5, 6] });
    const again = jsonLines((await runInProcess(['store', 'migrate', '--store', fresh, '--json'], { cwd: workspace.path })).stdout)[0];
    expect(again).toMatchObject({ from: 6, to: 6, applied: [] });
  });

  it('queues sessions with --detach and runs them on rein worker', async () => {
    const queued = await runInProcess(['run', 'detached greeting', '--script', 'script.json', '--approve', 'write', '--store', url, '--detach', '--json'], { cwd: workspace.path });
    expect(queued.code).toBe(0);
    const { sessionId: detached } = jsonLines(queued.stdout)[0]!;
    // Queued, not yet claimed: listed as queued (also under --status queued, never under another status), shown as queued.
    expect(jsonLines((await runInProcess(['sessions', '--json', '--store', url], { cwd: workspace.path })).stdout).find((line) => line.id === detached)).toMatchObject({ status: 'queued', head: 0, task: 'detached greeting' });
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'queued', '--store', url], { cwd: workspace.path })).stdout).map((line) => line.id)).toEqual([detached]);
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'completed', '--store', url], { cwd: workspace.path })).stdout).map((line) => line.id)).not.toContain(detached);
    const shown = await runInProcess(['show', detached, '--store', url], { cwd: workspace.path });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('queued');
    expect(jsonLines((await runInProcess(['show', detached, '--json', '--store', url], { cwd: workspace.path })).stdout)[0]).toMatchObject({ sessionId: detached, queued: true, state: 'queued', task: 'detached greeting' });
    const worker = await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path });
    expect(worker.code).toBe(0);
    const events = jsonLines(worker.stdout);
    expect(events.filter((event) => event.sessionId === detached).map((event) => event.type)).toEqual(['claimed', 'finished']);
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'queued', '--store', url], { cwd: workspace.path })).stdout)).toEqual([]);
    const [summary] = jsonLines((await runInProcess(['sessions', '--json', '--status', 'completed', '--store', url], { cwd: workspace.path })).stdout).filter((line) => line.id === detached);
    expect(summary).toMatchObject({ task: 'detached greeting' });
    const onLevel = await runInProcess(['run', 'x', '--script', 'script.json', '--detach'], { cwd: workspace.path });
    expect(onLevel.code).toBe(2);
    expect(onLevel.stderr).toContain('QUEUE_UNSUPPORTED');
    const workerOnLevel = await runInProcess(['worker', '--exit-when-idle', '100'], { cwd: workspace.path });
    expect(workerOnLevel.code).toBe(2);
    expect(workerOnLevel.stderr).toContain('QUEUE_UNSUPPORTED');
  });

  it('parks a queued session that waits for an approval until rein approve answers it', async () => {
    const queued = await runInProcess(['run', 'needs a yes', '--script', 'script.json', '--store', url, '--detach', '--json'], { cwd: workspace.path });
    const { sessionId: waiting } = jsonLines(queued.stdout)[0]!;
    const first = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout);
    expect(first.filter((event) => event.sessionId === waiting).map((event) => event.type)).toEqual(['claimed', 'parked']);
    const records = jsonLines((await runInProcess(['show', waiting, '--json', '--store', url], { cwd: workspace.path })).stdout);
    const approvalId = entriesOfRows(records).find((record) => record.type === 'approval.requested')!.data.approvalId as string;
    // The parked line says what the session waits for, with the id rein approve takes.
    expect(first.find((event) => event.type === 'parked')).toMatchObject({ waitingFor: [{ kind: 'approval', id: approvalId, summary: 'write out.txt' }], detail: expect.stringContaining(`answer with: rein approve ${waiting} ${approvalId} [--deny]`) });
    expect(first.find((event) => event.type === 'parked')!.detail).not.toContain('<id>');
    expect((await runInProcess(['approve', waiting, 'no-such-approval', '--store', url], { cwd: workspace.path })).stderr).toContain('APPROVAL_NOT_FOUND');
    const answered = await runInProcess(['approve', waiting, approvalId, '--store', url, '--json'], { cwd: workspace.path });
    expect(jsonLines(answered.stdout)[0]).toMatchObject({ sessionId: waiting, approvalId, decision: 'allow-once', state: 'queued' });
    // The same answer again (or a different one) is refused while the first waits for a worker.
    for (const again of [[], ['--deny']]) {
      const twice = await runInProcess(['approve', waiting, approvalId, ...again, '--store', url], { cwd: workspace.path });
      expect(twice.code).toBe(1);
      expect(twice.stderr).toContain('APPROVAL_NOT_FOUND');
    }
    const second = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout);
    expect(second.find((event) => event.sessionId === waiting && event.type === 'finished')).toMatchObject({ detail: 'completed' });
    const replay = await runInProcess(['replay', waiting, '--store', url], { cwd: workspace.path });
    expect(replay.code).toBe(0);
  });

  it('resumes a parked queued session from the CLI under its lease (rein resume --approve), leaving it done', async () => {
    const queued = await runInProcess(['run', 'answered at the terminal', '--script', 'script.json', '--store', url, '--detach', '--json'], { cwd: workspace.path });
    const { sessionId: waiting } = jsonLines(queued.stdout)[0]!;
    const parked = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout);
    expect(parked.filter((event) => event.sessionId === waiting).map((event) => event.type)).toEqual(['claimed', 'parked']);
    const resumed = await runInProcess(['resume', waiting, '--approve', 'write', '--store', url], { cwd: workspace.path });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const store = await openPostgresEventStore(url);
    try {
      expect(await new PostgresSessionQueue(store).entry(waiting)).toMatchObject({ state: 'done', claims: 2 });
    } finally {
      await store.close();
    }
  });

  /** Queue the slow script, start a worker, SIGTERM it once the command started; resolves with the session id. */
  const stopWorkerDuringCommand = async (flags: readonly string[], store: PostgresEventStore): Promise<string> => {
    await writeFile(join(workspace.path, 'slow.json'), JSON.stringify({ turns: [{ text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 3' } }] }, { text: 'Done.' }] }));
    const queued = await runInProcess(['run', 'wait a while', '--script', 'slow.json', '--store', url, '--detach', ...flags, '--json'], { cwd: workspace.path });
    const { sessionId: slow } = jsonLines(queued.stdout)[0]!;
    const worker = startCli(['worker', '--store', url, '--json'], { cwd: workspace.path });
    let out = '';
    worker.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => worker.on('close', resolve));
    try {
      while (!(await store.read(slow)).some((record) => record.type === 'tool.started')) await new Promise((resolve) => setTimeout(resolve, 50));
      worker.kill('SIGTERM');
      expect(await closed).toBe(0);
    } finally {
      worker.kill('SIGKILL');
    }
    expect(jsonLines(out).filter((event) => event.sessionId === slow).map((event) => event.type)).toEqual(['claimed', 'requeued']);
    expect(await new PostgresSessionQueue(store).entry(slow)).toMatchObject({ state: 'queued' });
    return slow;
  };

  it('hands a session back to the queue when its worker is stopped (SIGTERM), never reruns the command it cut short unconfirmed, and takes the confirmation through the queue', async () => {
    const store = await openPostgresEventStore(url);
    try {
      const slow = await stopWorkerDuringCommand(['--approve', 'bash'], store);
      const next = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout).filter((event) => event.sessionId === slow);
      expect(next.map((event) => event.type)).toEqual(['claimed', 'parked']);
      const records = await store.read(slow);
      expect(entriesOfRows(records).filter((record) => record.type === 'tool.started')).toHaveLength(1);
      const resolved = entriesOfRows(records).find((record) => record.type === 'effect.resolved')!;
      expect(resolved.data).toMatchObject({ resolution: 'awaiting-confirmation' });
      const effectId = (resolved.data as { effectId: string }).effectId;
      expect(next[1]).toMatchObject({ waitingFor: [{ kind: 'confirmation', id: effectId, summary: 'rerun bash sleep 3' }], detail: expect.stringContaining(effectId) });
      // Parked on the confirmation: listed (and indexed) as awaiting-confirmation, not interrupted.
      expect(jsonLines((await runInProcess(['sessions', '--json', '--store', url], { cwd: workspace.path })).stdout).find((line) => line.id === slow)).toMatchObject({ status: 'awaiting-confirmation' });
      expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'awaiting-confirmation', '--store', url], { cwd: workspace.path })).stdout).map((line) => line.id)).toEqual([slow]);
      expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'interrupted', '--store', url], { cwd: workspace.path })).stdout).map((line) => line.id)).not.toContain(slow);
      const confirmed = await runInProcess(['approve', slow, effectId, '--store', url, '--json'], { cwd: workspace.path });
      expect(confirmed.stderr).toBe('');
      expect(jsonLines(confirmed.stdout)[0]).toMatchObject({ sessionId: slow, effectId, decision: 'rerun', state: 'queued' });
      expect((await runInProcess(['approve', slow, effectId, '--store', url], { cwd: workspace.path })).stderr).toContain('APPROVAL_NOT_FOUND');
      const last = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout).filter((event) => event.sessionId === slow);
      expect(last.map((event) => [event.type, event.detail])).toEqual([['claimed', undefined], ['finished', 'completed']]);
      const after = await store.read(slow);
      expect(entriesOfRows(after).filter((record) => record.type === 'tool.started')).toHaveLength(2);
      expect(entriesOfRows(after).filter((record) => record.type === 'effect.resolved').at(-1)?.data).toMatchObject({ effectId, resolution: 'rerun' });
    } finally {
      await store.close();
    }
  });

  it('carries --yes of rein run --detach to the worker that resumes the session: the cut-short command is rerun, not parked', async () => {
    const store = await openPostgresEventStore(url);
    try {
      const slow = await stopWorkerDuringCommand(['--yes'], store);
      const next = jsonLines((await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: workspace.path })).stdout).filter((event) => event.sessionId === slow);
      expect(next.map((event) => [event.type, event.detail])).toEqual([['claimed', undefined], ['finished', 'completed']]);
      expect((await store.read(slow)).filter((record) => record.type === 'effect.resolved').map((record) => (record.data as { resolution: string }).resolution)).toEqual(['rerun']);
    } finally {
      await store.close();
    }
  });

  it('reports an unreachable server as STORE_UNAVAILABLE without showing the password', async () => {
    const down = new URL(url);
    down.port = '1';
    down.password = 'hunter2';
    const result = await runInProcess(['sessions', '--store', down.toString()], { cwd: workspace.path, env: { REIN_STORE_RETRY_MS: '200' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('STORE_UNAVAILABLE');
    expect(result.stderr).not.toContain('hunter2');
  });

  it('workers on several machines share the chain key through REIN_CHAIN_KEY_FILE: a machine with another key refuses to continue a session the first chained, one with the same key finishes it, and the log verifies under that key only', async () => {
    const keys = await makeTempDir('rein-pg-keys-');
    try {
      const shared = freshSchemaUrl();
      const machine = { REIN_CHAIN_KEY_FILE: join(keys.path, 'a', 'chain.key') };
      const stranger = { REIN_CHAIN_KEY_FILE: join(keys.path, 'b', 'chain.key') };
      const cli = (args: string[], env: Record<string, string>) => runInProcess([...args, '--store', shared], { cwd: workspace.path, env });
      const session = jsonLines((await cli(['run', 'needs a yes', '--script', 'script.json', '--detach', '--json'], machine)).stdout)[0]!.sessionId as string;
      const first = jsonLines((await cli(['worker', '--json', '--exit-when-idle', '300'], machine)).stdout);
      expect(first.filter((event) => event.sessionId === session).map((event) => event.type)).toEqual(['claimed', 'parked']);
      // Another key never appends to the session: that would vouch, under its key, for what this machine's key wrote.
      const refused = await cli(['resume', session, '--approve', 'write'], stranger);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toContain('CHAIN_UNAUTHENTICATED');
      const resumed = await cli(['resume', session, '--approve', 'write'], machine);
      expect(resumed.code, resumed.stderr).toBe(0);
      const verified = await cli(['verify', session, '--json'], machine);
      expect(verified.code, verified.stderr).toBe(0);
      expect(jsonLines(verified.stdout)[0]).toMatchObject({ status: 'authenticated', chainedFrom: 1 });
      expect((await cli(['replay', session], machine)).code).toBe(0);
      const elsewhere = await cli(['verify', session], stranger);
      expect(elsewhere.code).toBe(5);
      expect(elsewhere.stderr).toContain('CHAIN_UNAUTHENTICATED');
    } finally {
      await keys.remove();
    }
  }, 180_000);
});
