import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStorage, createMemoryEventStore, createRein, createScriptedProvider, parseScript } from '../../src/index.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import { encodeRecord } from '../../stores/record-drafts.js';
import { decodeValue, encodeValue } from '../../stores/record-codec.js';
import { changeRecord, relinkFrom } from '../stores/chain-forgery.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'bee\n' } }] },
    { text: 'Done.' },
  ],
};

/**
 * `rein resume` continues only a log this machine's key chained (appending would vouch for what someone else wrote),
 * a log written before the chain (its chain starts with the resume), and it never restores a snapshot the key did not
 * tag for the record it reflects.
 */
describe('resume and the chain', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let storage: MemoryStorage;
  const open = async (options: { snapshotEvery?: number; chainKey?: Awaited<ReturnType<typeof randomChainKey>> } = {}) => {
    const store = createMemoryEventStore({ storage, ...(options.chainKey ? { chainKey: options.chainKey } : {}) });
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider(parseScript(script)), sandbox: { loginShell: false }, ...(options.snapshotEvery ? { snapshotEvery: options.snapshotEvery } : {}) });
    return { store, rein };
  };
  /** A session paused on the write's approval, its process gone. */
  const paused = async (options: { snapshotEvery?: number } = {}) => {
    const { rein } = await open(options);
    const session = await rein.startSession({ task: 'write b' });
    expect((await session.whenQuiet()).status).toBe('paused');
    await rein.close('restart');
    return session.id;
  };
  beforeEach(async () => {
    dir = await makeTempDir('rein-chain-resume-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
    storage = new MemoryStorage();
  });
  afterEach(() => dir.remove());

  it('refuses a log whose chain is broken, or intact but not this machine\'s, and continues an authentic one', async () => {
    const id = await paused();
    const stream = storage.streams.get(id)!;
    const original = { records: [...stream.records], chain: [...stream.chain] };
    const { store } = await open();
    const entries = (await store.read(id)).map((record, index) => ({ record, field: stream.chain[index] }));
    const target = entries.findIndex((entry) => entry.record.type === 'model.responded');
    const forged = changeRecord(entries, target, { ...(entries[target]!.record.data as object), text: 'forged' });
    stream.records = forged.map((entry) => encodeRecord(entry.record, 'compact'));
    stream.chain = forged.map((entry) => entry.field);
    await expect((await open()).rein.resumeSession(id)).rejects.toMatchObject({ code: 'CHAIN_BROKEN', seq: target + 1 });
    const relinked = relinkFrom(forged, target);
    stream.chain = relinked.map((entry) => entry.field);
    await expect((await open()).rein.resumeSession(id)).rejects.toMatchObject({ code: 'CHAIN_UNAUTHENTICATED', seq: target + 1 });
    // Another machine's key finds the authentic log intact but not its own.
    stream.records = original.records;
    stream.chain = original.chain;
    await expect((await open({ chainKey: (await randomChainKey()) })).rein.resumeSession(id)).rejects.toMatchObject({ code: 'CHAIN_UNAUTHENTICATED', seq: 1 });
    const { rein, store: again } = await open();
    const { session } = await rein.resumeSession(id);
    expect(session.pendingApprovals()).toHaveLength(1);
    expect(await again.verifyChain(id)).toMatchObject({ status: 'authenticated' });
  });

  it('continues a log written before the chain, whose chain starts with the resume', async () => {
    const id = await paused();
    const stream = storage.streams.get(id)!;
    const head = stream.records.length;
    stream.chain = stream.chain.map(() => undefined);
    delete stream.seal;
    const { rein, store } = await open();
    expect(await store.verifyChain(id)).toMatchObject({ status: 'unchained' });
    const { session } = await rein.resumeSession(id);
    await session.approve(session.pendingApprovals()[0]!.approvalId, { decision: 'allow-once' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(await store.verifyChain(id)).toMatchObject({ status: 'authenticated', chainedFrom: head + 1 });
  });

  it('restores a snapshot only when this machine\'s key tagged it: one another key wrote is rejected, the log replayed in full, and the log says so', async () => {
    const id = await paused({ snapshotEvery: 1 });
    const mine = await open({ snapshotEvery: 1 });
    expect(await mine.store.loadSnapshot(id)).toMatchObject({ authenticated: true });
    const resumed = await mine.rein.resumeSession(id);
    expect(resumed.report.snapshotSeq).toBeDefined();
    expect(resumed.report.snapshotRejected).toBeUndefined();
    await mine.rein.close('restart');
    // The snapshot's state rewritten in the storage by someone without the key, who must guess its tag.
    const stream = storage.streams.get(id)!;
    const [seq, bytes] = [...stream.snapshots].at(-1)!;
    const stored = decodeValue(bytes, { stream: id }) as { data: unknown };
    stream.snapshots.set(seq, encodeValue({ ...stored, data: { forged: true, was: stored.data }, tag: new Uint8Array(16) }));
    const again = await open({ snapshotEvery: 1 });
    expect(await again.store.loadSnapshot(id)).toMatchObject({ seq, authenticated: false });
    const { report } = await again.rein.resumeSession(id);
    expect(report.snapshotSeq).toBeUndefined();
    expect(report.snapshotRejected).toMatch(/not authenticated by this machine's chain key/);
    expect((await again.store.read(id)).filter((record) => record.type === 'snapshot.rejected')).toHaveLength(1);
  });
});
