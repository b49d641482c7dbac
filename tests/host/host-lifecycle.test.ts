import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRein, createScriptedProvider, flattenRecords, openLevelEventStore, type EventStore } from 'rein';
import { makeTempDir } from '../support/temp-dir.js';

/** A session that asks before its first write (default mode), then says it is done. */
const writeScript = () => createScriptedProvider({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'x' } }] }, { text: 'Done.' }] });

let dir: { path: string; remove: () => Promise<void> };
const stores: EventStore[] = [];
const open = async () => {
  const store = await openLevelEventStore(`${dir.path}/.rein`);
  stores.push(store);
  return store;
};
beforeEach(async () => {
  dir = await makeTempDir('rein-host-lifecycle-');
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  await dir.remove();
});

describe('a host closing or releasing a session on LevelDB', () => {
  it('rein.close() leaves a session that only waits for a person awaiting approval, and another store resumes it at once', async () => {
    const first = await open();
    const rein = await createRein({ store: first, workspace: dir.path, provider: writeScript() });
    const session = await rein.startSession({ task: 'write a.txt' });
    expect((await session.whenQuiet()).status).toBe('paused');
    expect((await rein.getSession(session.id))?.status).toBe('awaiting-approval');
    await rein.close();

    // Another holder of the same directory (as another process would be) takes the session over without the first closing its store.
    const second = await open();
    const other = await createRein({ store: second, workspace: dir.path, provider: writeScript() });
    expect((await second.read(session.id)).map((record) => record.type)).not.toContain('session.interrupted');
    expect((await other.getSession(session.id))?.status).toBe('awaiting-approval');
    const { session: resumed } = await other.resumeSession(session.id);
    expect(resumed.pendingApprovals()).toHaveLength(1);
    await resumed.approve(resumed.pendingApprovals()[0]!.approvalId, { decision: 'allow-once' });
    expect((await resumed.whenQuiet()).status).toBe('completed');
    await other.close();
  });

  it('session.release() alone lets another store resume the session', async () => {
    const first = await open();
    const rein = await createRein({ store: first, workspace: dir.path, provider: writeScript() });
    const session = await rein.startSession({ task: 'write a.txt' });
    await session.whenQuiet();
    const second = await open();
    const other = await createRein({ store: second, workspace: dir.path, provider: writeScript() });
    await expect(other.resumeSession(session.id)).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    await session.release();
    const { session: resumed } = await other.resumeSession(session.id);
    expect(resumed.pendingApprovals()).toHaveLength(1);
    await other.close();
    await rein.close();
  });
});

describe('whenQuiet and the subscribers of a session', () => {
  it('resolves only after a records(1) subscriber on LevelDB has been handed every record up to the head', async () => {
    const store = await open();
    const turns = [
      ...Array.from({ length: 4 }, (_, index) => ({ text: `Writing ${index}.`, toolCalls: [{ name: 'write', arguments: { path: `f${index}.txt`, content: `${index}` } }, { name: 'list_dir', arguments: { path: '.' } }] })),
      { text: 'Done.' },
    ];
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider({ turns }), permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: 'look around' });
    const seen: number[] = [];
    const subscription = session.records(1).subscribe((record) => seen.push(record.seq));
    const result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    const head = (await store.read(session.id)).at(-1)!.seq;
    expect(seen).toEqual(Array.from({ length: head }, (_, index) => index + 1));
    subscription.unsubscribe();
    await rein.close();
  });
});

describe('a closed harness and an interrupted session', () => {
  it('after rein.close() the harness starts, creates, resumes and submits nothing (HARNESS_CLOSED)', async () => {
    const store = await open();
    const rein = await createRein({ store, workspace: dir.path, provider: writeScript() });
    const session = await rein.startSession({ task: 'write a.txt' });
    await session.whenQuiet();
    await rein.close();
    await expect(rein.startSession({ task: 'again' })).rejects.toMatchObject({ code: 'HARNESS_CLOSED' });
    await expect(rein.createSession({ task: 'again' })).rejects.toMatchObject({ code: 'HARNESS_CLOSED' });
    await expect(rein.resumeSession(session.id)).rejects.toMatchObject({ code: 'HARNESS_CLOSED' });
    await expect(rein.submit({ task: 'again' })).rejects.toMatchObject({ code: 'HARNESS_CLOSED' });
    expect((await rein.listSessions()).map((summary) => summary.id)).toEqual([session.id]);
  });

  it('a send() refused after interrupt() leaves whenQuiet() resolving, and the session resumable', async () => {
    const store = await open();
    const rein = await createRein({ store, workspace: dir.path, provider: writeScript() });
    const session = await rein.startSession({ task: 'write a.txt' });
    await session.whenQuiet();
    await session.interrupt('the host stops');
    await expect(session.send('one more thing')).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    expect((await session.whenQuiet()).status).toBe('interrupted');
    await session.release();
    const { session: resumed } = await rein.resumeSession(session.id);
    expect(resumed.pendingApprovals()).toHaveLength(1);
    await rein.close();
  });
});

describe("a session's observables end with it", () => {
  it('records$, records(1), live$ and the views complete once the session ended, so lastValueFrom resolves', async () => {
    const store = await open();
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider({ turns: [{ text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Done.' }] }) });
    const session = await rein.createSession({ task: 'look around' });
    const live = lastValueFrom(session.records$.pipe(toArray()));
    const history = lastValueFrom(session.records(1).pipe(toArray()));
    const trace = lastValueFrom(session.trace$);
    const progress = lastValueFrom(session.live$.pipe(toArray()));
    await session.send('look around');
    expect((await session.whenQuiet()).status).toBe('completed');
    const head = (await store.read(session.id)).at(-1)!.seq;
    expect((await history).map((record) => record.seq)).toEqual(Array.from({ length: head }, (_, index) => index + 1));
    // session.ended travels in the final step record.
    expect(flattenRecords(await live).some((record) => record.type === 'session.ended')).toBe(true);
    expect((await trace).seq).toBe(head);
    expect((await progress).length).toBeGreaterThan(0);
    // A late subscriber completes at once.
    expect(await lastValueFrom(session.records$.pipe(toArray()))).toEqual([]);
    await rein.close();
  });

  it('they complete when the session is released, and whenQuiet says what a paused session waits for', async () => {
    const store = await open();
    const rein = await createRein({ store, workspace: dir.path, provider: writeScript() });
    const idle = await rein.createSession({ task: 'nothing yet' });
    expect(await idle.whenQuiet()).toMatchObject({ status: 'paused', waitingFor: 'message' });
    const session = await rein.startSession({ task: 'write a.txt' });
    expect(await session.whenQuiet()).toMatchObject({ status: 'paused', waitingFor: 'approval' });
    const records = lastValueFrom(session.records(1).pipe(toArray()));
    const context = lastValueFrom(session.context$);
    await session.release();
    expect((await records).length).toBe((await store.read(session.id)).length);
    expect((await context).seq).toBeGreaterThan(0);
    await rein.close();
  });
});
