import { afterEach, beforeEach, expect, it } from 'vitest';
import { createRein, createScriptedProvider, openPostgresEventStore, PostgresSessionQueue, runWorker, submitSession, type ModelProvider, type PostgresEventStore, type WorkerSessionEvent } from 'rein';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A host's own model client: a `ModelProvider` no worker can build from a name. */
const customProvider: ModelProvider = {
  name: 'house-llm',
  model: 'house-1',
  async *stream() {
    yield { type: 'finished', stopReason: 'end_turn' };
  },
};

describePostgres('a queued session a worker cannot start', () => {
  let store: PostgresEventStore;
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    store = await openPostgresEventStore(freshSchemaUrl());
    workspace = await makeTempDir('rein-queued-start-');
  });
  afterEach(async () => {
    await store.close();
    await workspace.remove();
  });

  it('ends failed with the reason after one claim, while the next session is served and the worker goes idle', async () => {
    const base = { workspace: workspace.path, permissions: {}, sandbox: {}, budgets: {}, plugins: [], confirmInDoubt: false };
    await submitSession(store, { ...base, sessionId: 's-unbuildable', task: 'never starts', provider: { name: 'house-llm', model: 'house-1' }, submittedAt: 1 });
    // rein.submit carries the scripted provider's script, given as an object (no file anywhere).
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'Done.' }] }) });
    const good = await rein.submit({ task: 'say done', sessionId: 's-good' });

    const events: WorkerSessionEvent[] = [];
    const report = await runWorker({ store, pollMs: 50, exitWhenIdleMs: 300, onEvent: (event) => events.push(event) });

    expect(report).toMatchObject({ claimed: 2, finished: 1, failed: 1 });
    const queue = new PostgresSessionQueue(store);
    expect(await queue.entry('s-unbuildable')).toMatchObject({ state: 'failed', claims: 1, failure: expect.stringContaining('house-llm') });
    expect(await rein.getSession('s-unbuildable')).toMatchObject({ id: 's-unbuildable', status: 'failed', task: 'never starts', reason: expect.stringContaining('USAGE') });
    expect((await rein.listSessions()).map((summary) => [summary.id, summary.status])).toEqual(expect.arrayContaining([['s-unbuildable', 'failed'], [good, 'completed']]));
    expect(events.filter((event) => event.type === 'claimed').map((event) => event.sessionId).sort()).toEqual(['s-good', 's-unbuildable']);
  });

  it('backs off a start that failed for a passing reason, a bounded number of times', async () => {
    await submitSession(store, { sessionId: 's-flaky', task: 'x', workspace: workspace.path, provider: { name: 'scripted' }, script: { turns: [{ text: 'Done.' }] }, permissions: {}, sandbox: {}, budgets: {}, plugins: [], confirmInDoubt: false });
    const attempts: number[] = [];
    const started = Date.now();
    const report = await runWorker({
      store,
      pollMs: 20,
      exitWhenIdleMs: 400,
      startRetry: { maxAttempts: 3, baseDelayMs: 60 },
      // The workspace's plugins cannot be read: not the session's fault, so it is tried again later.
      plugins: async () => {
        attempts.push(Date.now() - started);
        throw Object.assign(new Error('the plugin registry did not answer'), { code: 'ECONNRESET' });
      },
    });
    expect(attempts).toHaveLength(3);
    // 60 ms, then 120 ms between claims at least: no busy loop.
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(55);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(115);
    expect(report).toMatchObject({ claimed: 3, failed: 1 });
    expect(await new PostgresSessionQueue(store).entry('s-flaky')).toMatchObject({ state: 'failed', claims: 3, failure: expect.stringContaining('gave up after 3 attempts') });
  });

  it('a first claim whose log was written meanwhile resumes it (the create without a head read finds the id taken)', async () => {
    await submitSession(store, { sessionId: 's-early', task: 'x', workspace: workspace.path, provider: { name: 'scripted' }, script: { turns: [{ text: 'Done.' }] }, permissions: {}, sandbox: {}, budgets: {}, plugins: [], confirmInDoubt: false });
    // Another host runs a session of the same id before any worker claims it.
    const host = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'Done by hand.' }] }) });
    const early = await host.startSession({ task: 'x', sessionId: 's-early' });
    expect(await early.whenQuiet()).toMatchObject({ status: 'completed' });
    await host.close();
    const before = await store.read('s-early');

    const events: WorkerSessionEvent[] = [];
    const report = await runWorker({ store, pollMs: 20, exitWhenIdleMs: 200, onEvent: (event) => events.push(event) });

    expect(report).toMatchObject({ claimed: 1, finished: 1, failed: 0 });
    expect(events.find((event) => event.type === 'claimed')).toMatchObject({ sessionId: 's-early', epoch: 1 });
    const after = await store.read('s-early');
    // Its log is the one the host wrote (one session.created), continued: nothing was created over it.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.filter((record) => record.type === 'session.created')).toHaveLength(1);
    expect(await new PostgresSessionQueue(store).entry('s-early')).toMatchObject({ state: 'done', claims: 1 });
  });

  it('rein.submit refuses a provider no worker can build, queueing nothing', async () => {
    const rein = await createRein({ store, workspace: workspace.path, provider: customProvider });
    await expect(rein.submit({ task: 'x', sessionId: 's-refused' })).rejects.toMatchObject({ code: 'QUEUE_UNSUPPORTED' });
    expect(await new PostgresSessionQueue(store).entry('s-refused')).toBeUndefined();
    expect(await rein.getSession('s-refused')).toBeUndefined();
  });

  it('getSession finds a session that is queued and not yet started', async () => {
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'Done.' }] }) });
    const id = await rein.submit({ task: 'wait in line' });
    expect(await rein.getSession(id)).toMatchObject({ id, status: 'queued', task: 'wait in line', head: 0 });
    expect((await rein.listSessions()).find((summary) => summary.id === id)).toMatchObject({ status: 'queued' });
  });
});
