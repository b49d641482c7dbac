import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import type { ArtifactRef } from '../../stores/blob-store.js';
import type { EventStore, PositionedRecord } from '../../stores/event-store.js';
import { createBLAKE3 } from 'hash-wasm';
import { draft, drafts, expectCode } from './store-test-support.js';
import { randomChainKey, type ChainKey } from '../../stores/chain-crypto.js';
import { changeRecord, deleteRecord, insertRecord, relinkFrom, swapRecords, truncate, type ChainEntry } from './chain-forgery.js';

/** One fresh store plus the backend-specific hooks the suite needs. */
export interface ConformanceSubject {
  store: EventStore;
  /** Damages the stored bytes of one record so its checksum fails. */
  corrupt(stream: string, seq: number): Promise<void>;
  /** Damages the stored bytes of one blob. */
  corruptBlob(ref: ArtifactRef): Promise<void>;
  /** Damages the stored bytes of one blob appended with a stream. */
  corruptStreamBlob(stream: string, ref: ArtifactRef): Promise<void>;
  /** Closes the store and opens it again on the same storage (persistent backends only). */
  reopen?(): Promise<EventStore>;
  /** The stream's stored records with their chain fields, read around the store. */
  rawChain(stream: string): Promise<ChainEntry[]>;
  /**
   * Rewrites the stream's stored records and chain fields around the store, as someone with write access to the storage
   * but without the key would: nothing is computed, the stream's seal stays as the store left it (`dropSeal`: removed).
   * Resolves with the store to go on with (LevelDB closes and reopens it).
   */
  forge(stream: string, entries: readonly ChainEntry[], options?: { dropSeal?: boolean }): Promise<EventStore>;
  /** A store over the same storage that chains with `key` (another machine's), opened beside this one. */
  withKey(key: ChainKey): Promise<EventStore>;
}

/** A backend under test: its name and how to open a fresh, empty store. */
export interface ConformanceHarness {
  name: string;
  open(): Promise<ConformanceSubject>;
}

const withoutStream = (records: RecordEnvelope[]): Omit<RecordEnvelope, 'stream'>[] =>
  records.map(({ stream: _stream, ...rest }) => rest);

const seqs = (records: RecordEnvelope[]): number[] => records.map((record) => record.seq);

/**
 * The EventStore conformance suite, modelled on Akka's JournalSpec and SnapshotStoreSpec. Every backend runs it
 * unchanged; it asserts error codes, never messages.
 */
export function describeEventStoreConformance(harness: ConformanceHarness): void {
  describe(`EventStore conformance: ${harness.name}`, () => {
    const opened: EventStore[] = [];
    const subject = async (): Promise<ConformanceSubject> => {
      const fresh = await harness.open();
      opened.push(fresh.store);
      const tracked = (open: (...args: never[]) => Promise<EventStore>) => async (...args: never[]) => {
        const again = await open(...args);
        opened.push(again);
        return again;
      };
      const reopen = fresh.reopen;
      return {
        ...fresh,
        forge: tracked(fresh.forge as (...args: never[]) => Promise<EventStore>) as ConformanceSubject['forge'],
        withKey: tracked(fresh.withKey as (...args: never[]) => Promise<EventStore>) as ConformanceSubject['withKey'],
        ...(reopen === undefined ? {} : { reopen: tracked(reopen) as ConformanceSubject['reopen'] }),
      };
    };
    /** A store whose stream `s` holds records 1..5 (appended as 2 + 3). */
    const withFive = async (): Promise<{ store: EventStore; subject: ConformanceSubject }> => {
      const current = await subject();
      await current.store.append('s', drafts(1, 2), { expectedSeq: 0 });
      await current.store.append('s', drafts(3, 3), { expectedSeq: 2 });
      return { store: current.store, subject: current };
    };

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    describe('read', () => {
      it('replays every record in seq order', async () => {
        const { store } = await withFive();
        const records = await store.read('s');
        expect(seqs(records)).toEqual([1, 2, 3, 4, 5]);
        expect(records.map((record) => record.id)).toEqual(['r-1', 'r-2', 'r-3', 'r-4', 'r-5']);
        expect(records.every((record) => record.stream === 's')).toBe(true);
      });
      it('honours from, to, limit and their combination', async () => {
        const { store } = await withFive();
        expect(seqs(await store.read('s', { from: 3 }))).toEqual([3, 4, 5]);
        expect(seqs(await store.read('s', { to: 2 }))).toEqual([1, 2]);
        expect(seqs(await store.read('s', { limit: 3 }))).toEqual([1, 2, 3]);
        expect(seqs(await store.read('s', { from: 2, to: 4, limit: 2 }))).toEqual([2, 3]);
        expect(seqs(await store.read('s', { from: 2, to: 4, limit: 10 }))).toEqual([2, 3, 4]);
        expect(seqs(await store.read('s', { from: 4, to: 99 }))).toEqual([4, 5]);
      });
      it('returns one record when from equals to', async () => {
        const { store } = await withFive();
        expect(seqs(await store.read('s', { from: 3, to: 3 }))).toEqual([3]);
      });
      it('returns nothing for limit 0, from > to, or from past the head', async () => {
        const { store } = await withFive();
        expect(await store.read('s', { limit: 0 })).toEqual([]);
        expect(await store.read('s', { from: 4, to: 3 })).toEqual([]);
        expect(await store.read('s', { from: 6 })).toEqual([]);
      });
      it('reads in reverse within the bounds, the limit counting from the top', async () => {
        const { store } = await withFive();
        expect(seqs(await store.read('s', { reverse: true }))).toEqual([5, 4, 3, 2, 1]);
        expect(seqs(await store.read('s', { reverse: true, limit: 2 }))).toEqual([5, 4]);
        expect(seqs(await store.read('s', { reverse: true, from: 2, to: 4 }))).toEqual([4, 3, 2]);
        expect(seqs(await store.read('s', { reverse: true, from: 2, to: 4, limit: 2 }))).toEqual([4, 3]);
        expect(await store.read('s', { reverse: true, limit: 0 })).toEqual([]);
      });
      it('reads an unknown stream as empty with head 0 and no info', async () => {
        const { store } = await subject();
        expect(await store.read('nobody')).toEqual([]);
        expect(await store.head('nobody')).toBe(0);
        expect(await store.info('nobody')).toBeUndefined();
        expect(await store.loadSnapshot('nobody')).toBeUndefined();
      });
      it('rejects invalid read options and stream names', async () => {
        const { store } = await withFive();
        await expectCode(store.read('s', { from: -1 }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.read('s', { limit: 1.5 }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.read('../escape'), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.head(''), 'STORE_INVALID_ARGUMENT');
      });
      it('returns isolated copies', async () => {
        const { store } = await withFive();
        const [first] = await store.read('s', { to: 1 });
        (first!.data as { index: number }).index = 999;
        const [again] = await store.read('s', { to: 1 });
        expect(again!.data).toEqual({ index: 1 });
      });
    });

    describe('append', () => {
      it('assigns gap-free seqs from 1 across appends and returns the stored envelopes', async () => {
        const { store } = await subject();
        const first = await store.append('s', drafts(1, 1), { expectedSeq: 0 });
        const second = await store.append('s', drafts(2, 3), { expectedSeq: 1 });
        const third = await store.append('s', drafts(5, 2), { expectedSeq: 4 });
        expect([...first, ...second, ...third].map((record) => [record.stream, record.seq])).toEqual(
          [1, 2, 3, 4, 5, 6].map((seq) => ['s', seq]),
        );
        expect(await store.head('s')).toBe(6);
        expect(await store.read('s')).toEqual([...first, ...second, ...third]);
      });
      it('rejects a stale expectedSeq with STORE_CONFLICT and writes nothing', async () => {
        const { store } = await withFive();
        await expectCode(store.append('s', drafts(6, 1), { expectedSeq: 4 }), 'STORE_CONFLICT');
        await expectCode(store.append('s', drafts(6, 1), { expectedSeq: 6 }), 'STORE_CONFLICT');
        await expectCode(store.append('new', drafts(1, 1), { expectedSeq: 1 }), 'STORE_CONFLICT');
        expect(await store.head('s')).toBe(5);
        expect(await store.info('new')).toBeUndefined();
      });
      it('lets exactly one of two concurrent writers with the same expectedSeq win', async () => {
        const { store } = await withFive();
        const results = await Promise.allSettled([
          store.append('s', [draft(100), draft(101)], { expectedSeq: 5 }),
          store.append('s', [draft(200)], { expectedSeq: 5 }),
        ]);
        const won = results.filter((result) => result.status === 'fulfilled');
        const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0]!.reason as { code: string }).code).toBe('STORE_CONFLICT');
        const tail = await store.read('s', { from: 6 });
        const winner = results[0]!.status === 'fulfilled' ? ['r-100', 'r-101'] : ['r-200'];
        expect(tail.map((record) => record.id)).toEqual(winner);
      });
      it('keeps concurrent writers on different streams apart', async () => {
        const { store } = await subject();
        await Promise.all(
          ['a', 'b', 'c'].map(async (stream) => {
            for (let seq = 0; seq < 10; seq++) await store.append(stream, [draft(seq, { data: { stream } })], { expectedSeq: seq });
          }),
        );
        for (const stream of ['a', 'b', 'c']) {
          const records = await store.read(stream);
          expect(seqs(records)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
          expect(records.every((record) => (record.data as { stream: string }).stream === stream)).toBe(true);
        }
      });
      it('rejects a whole batch with an invalid draft and leaves the head where it was', async () => {
        const { store } = await withFive();
        const badType = [draft(6), draft(7, { type: 'Not A Type' }), draft(8)];
        await expectCode(store.append('s', badType, { expectedSeq: 5 }), 'STORE_INVALID_ARGUMENT');
        const unencodable = [draft(6), draft(7, { data: { huge: 2n ** 70n } })];
        await expectCode(store.append('s', unencodable, { expectedSeq: 5 }), 'STORE_INVALID_ARGUMENT');
        const missingId = [draft(6), { ...draft(7), id: '' }];
        await expectCode(store.append('s', missingId, { expectedSeq: 5 }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.append('fresh', [draft(1, { v: 0 })], { expectedSeq: 0 }), 'STORE_INVALID_ARGUMENT');
        expect(await store.head('s')).toBe(5);
        expect(seqs(await store.read('s'))).toEqual([1, 2, 3, 4, 5]);
        expect(await store.info('fresh')).toBeUndefined();
      });
      it('makes a multi-record batch visible all at once', async () => {
        const { store } = await withFive();
        const appending = store.append('s', drafts(6, 50), { expectedSeq: 5 });
        const seen = await store.read('s');
        expect([5, 55]).toContain(seen.length);
        await appending;
        expect(await store.head('s')).toBe(55);
      });
      it('treats an empty batch as a no-op that still checks expectedSeq', async () => {
        const { store } = await withFive();
        expect(await store.append('s', [], { expectedSeq: 5 })).toEqual([]);
        await expectCode(store.append('s', [], { expectedSeq: 3 }), 'STORE_CONFLICT');
        expect(await store.append('empty', [], { expectedSeq: 0 })).toEqual([]);
        expect(await store.info('empty')).toBeUndefined();
      });
      it('rejects invalid arguments', async () => {
        const { store } = await subject();
        await expectCode(store.append('bad name!', drafts(1, 1), { expectedSeq: 0 }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.append('s', drafts(1, 1), { expectedSeq: -1 }), 'STORE_INVALID_ARGUMENT');
      });
      it('takes a new stream\'s creation time from the append when given (copying stores), and only then', async () => {
        const { store } = await subject();
        await store.append('copied', drafts(1, 1), { expectedSeq: 0, createdAt: 1_234 });
        await store.append('copied', drafts(2, 1), { expectedSeq: 1, createdAt: 99_999 });
        expect((await store.info('copied'))?.createdAt).toBe(1_234);
      });
      it('stores canonical values: undefined-valued keys are dropped', async () => {
        const { store } = await subject();
        const written: RecordDraft = { ...draft(1), cause: undefined, data: { kept: 1, dropped: undefined, nested: { gone: undefined } } };
        await store.append('s', [written], { expectedSeq: 0 });
        const [stored] = await store.read('s');
        expect(Object.keys(stored!)).not.toContain('cause');
        expect(stored!.data).toStrictEqual({ kept: 1, nested: {} });
      });
    });

    describe('tail', () => {
      it('emits history, then live appends, with no gap and no duplicate', async () => {
        const { store } = await withFive();
        const collected = lastValueFrom(store.tail('s').pipe(take(9), toArray()));
        await store.append('s', drafts(6, 2), { expectedSeq: 5 });
        await store.append('s', drafts(8, 2), { expectedSeq: 7 });
        expect(seqs(await collected)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });
      it('starts at from in the middle of the history', async () => {
        const { store } = await withFive();
        const collected = lastValueFrom(store.tail('s', 4).pipe(take(3), toArray()));
        await store.append('s', drafts(6, 1), { expectedSeq: 5 });
        expect(seqs(await collected)).toEqual([4, 5, 6]);
      });
      it('stays gap-free while appends race the history read', async () => {
        const { store } = await withFive();
        const collected = lastValueFrom(store.tail('s', 2).pipe(take(44), toArray()));
        for (let head = 5; head < 45; head += 4) await store.append('s', drafts(head + 1, 4), { expectedSeq: head });
        expect(seqs(await collected)).toEqual(Array.from({ length: 44 }, (_, index) => index + 2));
      });
      it('waits on an unknown stream and completes when the store closes', async () => {
        const current = await subject();
        const collected = lastValueFrom(current.store.tail('later').pipe(toArray()));
        await current.store.append('later', drafts(1, 3), { expectedSeq: 0 });
        await current.store.close();
        expect(seqs(await collected)).toEqual([1, 2, 3]);
      });
    });

    describe('readAll', () => {
      const ids = (page: PositionedRecord[]) => page.map((entry) => `${entry.record.stream}#${entry.record.seq}`);
      const readEverything = async (store: EventStore, pageSize: number, after?: string): Promise<PositionedRecord[]> => {
        const all: PositionedRecord[] = [];
        for (let cursor = after; ; ) {
          const page = await store.readAll({ ...(cursor === undefined ? {} : { after: cursor }), limit: pageSize });
          all.push(...page);
          if (page.length < pageSize) return all;
          cursor = page[page.length - 1]!.position;
        }
      };

      it('reads every stream page by page, each stream in seq order, with distinct positions', async () => {
        const { store } = await subject();
        await store.append('s', drafts(1, 3), { expectedSeq: 0 });
        await store.append('t', drafts(1, 2), { expectedSeq: 0 });
        await store.append('s', drafts(4, 2), { expectedSeq: 3 });
        await store.fork('s', 2, { newStream: 'branch' });
        const all = await store.readAll({ limit: 100 });
        expect(all).toHaveLength(9);
        for (const stream of ['s', 't', 'branch']) {
          const own = all.filter((entry) => entry.record.stream === stream).map((entry) => entry.record);
          expect(own).toEqual(await store.read(stream));
        }
        expect(new Set(all.map((entry) => entry.position)).size).toBe(9);
        expect(ids(await readEverything(store, 2))).toEqual(ids(all));
        expect(await store.readAll({ after: all[8]!.position })).toEqual([]);
        if (store.capabilities.globalOrder) expect(ids(all)).toEqual(['s#1', 's#2', 's#3', 't#1', 't#2', 's#4', 's#5', 'branch#1', 'branch#2']);
      });
      it('returns what was appended after a read, after the last position that read returned', async () => {
        const { store } = await withFive();
        const first = await store.readAll();
        const last = first[first.length - 1]!.position;
        await store.append('u', drafts(1, 2), { expectedSeq: 0 });
        await store.append('s', drafts(6, 1), { expectedSeq: 5 });
        const later = ids(await readEverything(store, 10, last));
        if (store.capabilities.globalOrder) expect(later).toEqual(['u#1', 'u#2', 's#6']);
        else expect(later).toEqual(expect.arrayContaining(['u#1', 'u#2']));
      });
      it('rejects positions it never issued and bad limits; limit 0 reads nothing', async () => {
        const { store } = await withFive();
        await expectCode(store.readAll({ after: 'not a position' }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.readAll({ limit: -1 }), 'STORE_INVALID_ARGUMENT');
        expect(await store.readAll({ limit: 0 })).toEqual([]);
      });
      it('detects a corrupted record instead of returning it', async () => {
        const { store, subject: current } = await withFive();
        await current.corrupt('s', 2);
        await expectCode(store.readAll(), 'STORE_CORRUPT_RECORD');
      });
    });

    describe('streams and fork', () => {
      it('lists streams with their head, creation time and fork parent', async () => {
        const { store } = await withFive();
        await store.append('t', drafts(1, 2), { expectedSeq: 0 });
        await store.fork('s', 3, { newStream: 's-branch' });
        const listed = await store.streams();
        expect(listed.map((info) => info.stream).sort()).toEqual(['s', 's-branch', 't']);
        const byName = new Map(listed.map((info) => [info.stream, info]));
        expect(byName.get('s')!.head).toBe(5);
        expect(byName.get('t')!.head).toBe(2);
        expect(byName.get('s-branch')!.forkedFrom).toEqual({ stream: 's', seq: 3 });
        expect(byName.get('s')!.forkedFrom).toBeUndefined();
        expect(typeof byName.get('s')!.createdAt).toBe('number');
        expect(await store.info('t')).toEqual(byName.get('t'));
      });
      it('forks a stream whose records 1..atSeq equal the parent, leaving the parent untouched', async () => {
        const { store } = await withFive();
        const parentBefore = await store.read('s');
        const info = await store.fork('s', 3, { newStream: 'branch' });
        expect(info).toMatchObject({ stream: 'branch', head: 3, forkedFrom: { stream: 's', seq: 3 } });
        const branch = await store.read('branch');
        expect(branch.every((record) => record.stream === 'branch')).toBe(true);
        expect(withoutStream(branch)).toEqual(withoutStream(parentBefore.slice(0, 3)));
        expect(await store.read('s')).toEqual(parentBefore);
        await store.append('branch', [draft(40)], { expectedSeq: 3 });
        await store.append('s', [draft(60)], { expectedSeq: 5 });
        expect((await store.read('branch')).map((record) => record.id)).toEqual(['r-1', 'r-2', 'r-3', 'r-40']);
        expect((await store.read('s')).map((record) => record.id)).toEqual(['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-60']);
      });
      it('names the fork itself when no name is given', async () => {
        const { store } = await withFive();
        const info = await store.fork('s', 5);
        expect(info.stream).not.toBe('s');
        expect(await store.head(info.stream)).toBe(5);
      });
      it('rejects bad fork points, unknown parents and taken names', async () => {
        const { store } = await withFive();
        await store.append('taken', drafts(1, 1), { expectedSeq: 0 });
        await expectCode(store.fork('s', 0, { newStream: 'x' }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.fork('s', 6, { newStream: 'x' }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.fork('missing', 1, { newStream: 'x' }), 'STORE_STREAM_NOT_FOUND');
        await expectCode(store.fork('s', 2, { newStream: 'taken' }), 'STORE_STREAM_EXISTS');
        await expectCode(store.fork('s', 2, { newStream: 's' }), 'STORE_STREAM_EXISTS');
        await expectCode(store.fork('s', 2, { newStream: 'no/slash' }), 'STORE_INVALID_ARGUMENT');
        expect(await store.info('x')).toBeUndefined();
        expect(await store.head('taken')).toBe(1);
      });
    });

    describe('snapshots', () => {
      it('loads the latest snapshot, or the latest at or before a seq', async () => {
        const { store } = await withFive();
        await store.saveSnapshot('s', { seq: 2, version: 'm@1', at: 10, data: { state: 'two' } });
        await store.saveSnapshot('s', { seq: 4, version: 'm@1', at: 20, data: { state: 'four' } });
        expect(await store.loadSnapshot('s')).toEqual({ seq: 4, version: 'm@1', at: 20, data: { state: 'four' }, authenticated: true });
        expect((await store.loadSnapshot('s', { atOrBefore: 4 }))?.seq).toBe(4);
        expect((await store.loadSnapshot('s', { atOrBefore: 3 }))?.seq).toBe(2);
        expect(await store.loadSnapshot('s', { atOrBefore: 1 })).toBeUndefined();
      });
      it('has no snapshot before the first one is saved', async () => {
        const { store } = await withFive();
        expect(await store.loadSnapshot('s')).toBeUndefined();
      });
      it('rejects snapshots past the head or of unknown streams', async () => {
        const { store } = await withFive();
        await expectCode(store.saveSnapshot('s', { seq: 6, version: 'm@1', at: 1, data: null }), 'STORE_INVALID_ARGUMENT');
        await expectCode(store.saveSnapshot('nobody', { seq: 1, version: 'm@1', at: 1, data: null }), 'STORE_STREAM_NOT_FOUND');
      });
    });

    describe('blobs', () => {
      it('round-trips bytes and strings under a content address, idempotently', async () => {
        const { store } = await subject();
        const bytes = Uint8Array.from([0, 1, 2, 250, 255]);
        const ref = await store.blobs.put(bytes);
        expect(ref).toMatch(/^artifact:\/\/blake3\/[0-9a-f]{64}$/);
        expect(await store.blobs.put(Uint8Array.from(bytes))).toBe(ref);
        expect(Uint8Array.from(await store.blobs.get(ref))).toEqual(bytes);
        const text = await store.blobs.put('héllo');
        expect(Buffer.from(await store.blobs.get(text)).toString('utf8')).toBe('héllo');
        expect(await store.blobs.put(Buffer.from('héllo', 'utf8'))).toBe(text);
        expect(await store.blobs.has(ref)).toBe(true);
      });
      it('reports unknown and malformed refs', async () => {
        const { store } = await subject();
        const unknown: ArtifactRef = `artifact://blake3/${'0'.repeat(64)}`;
        expect(await store.blobs.has(unknown)).toBe(false);
        await expectCode(store.blobs.get(unknown), 'BLOB_NOT_FOUND');
        await expectCode(store.blobs.get('artifact://sha1/abc'), 'STORE_INVALID_ARGUMENT');
      });
      it('detects a corrupted blob', async () => {
        const current = await subject();
        const ref = await current.store.blobs.put('a blob that will be damaged');
        await current.corruptBlob(ref);
        await expectCode(current.store.blobs.get(ref), 'BLOB_CORRUPT');
      });
    });

    describe('stream blobs', () => {
      const refOf = (bytes: Uint8Array | string): Promise<ArtifactRef> => createBLAKE3().then((hasher) => `artifact://blake3/${hasher.init().update(bytes).digest('hex')}` as ArtifactRef);

      it('writes blobs in the same batch as the records and reads them back by ref', async () => {
        const { store } = await subject();
        const ref = await refOf('the exact model input');
        await store.append('s', [draft(1, { data: { input: ref } })], { expectedSeq: 0, blobs: ['the exact model input', Uint8Array.from([1, 2, 3])] });
        expect(Buffer.from(await store.readBlob('s', ref)).toString('utf8')).toBe('the exact model input');
        expect(Uint8Array.from(await store.readBlob('s', await refOf(Uint8Array.from([1, 2, 3]))))).toEqual(Uint8Array.from([1, 2, 3]));
        expect(await store.blobs.has(ref)).toBe(false);
      });

      it('writes no blob when the append conflicts', async () => {
        const { store } = await withFive();
        const ref = await refOf('lost with the batch');
        await expectCode(store.append('s', [draft(6)], { expectedSeq: 4, blobs: ['lost with the batch'] }), 'STORE_CONFLICT');
        await expectCode(store.readBlob('s', ref), 'BLOB_NOT_FOUND');
      });

      it('falls back to the shared blob store, and keeps streams apart', async () => {
        const { store } = await withFive();
        const shared = await store.blobs.put('shared bytes');
        expect(Buffer.from(await store.readBlob('s', shared)).toString('utf8')).toBe('shared bytes');
        const own = await refOf('only in s');
        await store.append('s', [draft(6)], { expectedSeq: 5, blobs: ['only in s'] });
        await store.append('other', [draft(1)], { expectedSeq: 0 });
        await expectCode(store.readBlob('other', own), 'BLOB_NOT_FOUND');
        await expectCode(store.readBlob('s', 'artifact://sha1/x'), 'STORE_INVALID_ARGUMENT');
      });

      it('carries stream blobs into a fork', async () => {
        const { store } = await withFive();
        const ref = await refOf('evidence');
        await store.append('s', [draft(6)], { expectedSeq: 5, blobs: ['evidence'] });
        await store.fork('s', 6, { newStream: 'kid' });
        expect(Buffer.from(await store.readBlob('kid', ref)).toString('utf8')).toBe('evidence');
      });

      it('detects a damaged stream blob', async () => {
        const current = await subject();
        const ref = await refOf('will be damaged');
        await current.store.append('s', [draft(1)], { expectedSeq: 0, blobs: ['will be damaged'] });
        await current.corruptStreamBlob('s', ref);
        await expectCode(current.store.readBlob('s', ref), 'BLOB_CORRUPT');
      });
    });

    describe('chain', () => {
      /** A store whose stream `s` holds records 1..8 (appended as 3 + 5). */
      const withEight = async () => {
        const current = await subject();
        await current.store.append('s', drafts(1, 3), { expectedSeq: 0 });
        await current.store.append('s', drafts(4, 5), { expectedSeq: 3 });
        return current;
      };
      const forged = async (edit: (entries: ChainEntry[]) => ChainEntry[], options?: { dropSeal?: boolean }) => {
        const current = await withEight();
        const entries = await current.rawChain('s');
        expect(entries.every((entry) => entry.field?.length === 12)).toBe(true);
        return current.forge('s', edit(entries), options);
      };

      it('chains every appended record under the store key: intact, authenticated, from record 1', async () => {
        const current = await withEight();
        expect(await current.store.verifyChain('s')).toMatchObject({ stream: 's', head: 8, status: 'authenticated', chainedFrom: 1 });
        expect(await current.store.verifyChain('nothing-here')).toMatchObject({ head: 0 });
        // A store writes the same chain for the same records under the same key: the fields are a function of them.
        const fields = (await current.rawChain('s')).map((entry) => Buffer.from(entry.field!).toString('hex'));
        expect(new Set(fields).size).toBe(8);
      });
      it('ignores chain fields a caller passes: the store computes them', async () => {
        const current = await subject();
        const bogus = { chain: new Uint8Array(12).fill(7), field: 'x', mac: 'y' };
        await current.store.append('s', drafts(1, 3).map((item) => ({ ...item, ...bogus })), { expectedSeq: 0 });
        const records = await current.store.read('s');
        expect(records.every((record) => !('chain' in record) && !('mac' in record))).toBe(true);
        expect((await current.rawChain('s')).some((entry) => Buffer.from(entry.field!).equals(Buffer.from(bogus.chain)))).toBe(false);
        expect(await current.store.verifyChain('s')).toMatchObject({ status: 'authenticated' });
      });
      it('says a copy written under another key is intact but not authenticated, from record 1', async () => {
        const current = await withEight();
        const other = await current.withKey((await randomChainKey()));
        await other.append('copy', (await current.store.read('s')).map(({ stream: _stream, seq: _seq, ...item }) => item), { expectedSeq: 0 });
        expect(await other.verifyChain('copy')).toMatchObject({ status: 'authenticated' });
        expect(await current.store.verifyChain('copy')).toMatchObject({ status: 'unauthenticated', seq: 1, chainedFrom: 1 });
        expect(await other.verifyChain('s')).toMatchObject({ status: 'unauthenticated', seq: 1 });
      });
      it('names the record a forger changed, with the chain left as it was: broken there', async () => {
        const store = await forged((entries) => changeRecord(entries, 4, { index: 5, forged: true }));
        expect(await store.verifyChain('s')).toMatchObject({ status: 'broken', seq: 5 });
      });
      it('names the record a forger changed and relinked without the key: intact but not authenticated from there', async () => {
        const store = await forged((entries) => relinkFrom(changeRecord(entries, 4, { index: 5, forged: true }), 4));
        expect(await store.verifyChain('s')).toMatchObject({ status: 'unauthenticated', seq: 5 });
      });
      it('names where a record was deleted, two were swapped or one inserted', async () => {
        expect(await (await forged((entries) => deleteRecord(entries, 2))).verifyChain('s')).toMatchObject({ status: 'broken', seq: 3 });
        expect(await (await forged((entries) => swapRecords(entries, 5))).verifyChain('s')).toMatchObject({ status: 'broken', seq: 6 });
        expect(await (await forged((entries) => insertRecord(entries, 1, { ...entries[1]!.record, id: 'r-planted', data: { planted: true } }))).verifyChain('s')).toMatchObject({ status: 'broken', seq: 2 });
        // Relinked without the key, the same forgeries are not authenticated from the same record (and a deletion also
        // leaves the stream short of its seal: broken, named at the first record concerned).
        expect(await (await forged((entries) => relinkFrom(swapRecords(entries, 5), 5))).verifyChain('s')).toMatchObject({ status: 'unauthenticated', seq: 6 });
        expect(await (await forged((entries) => relinkFrom(deleteRecord(entries, 2), 2))).verifyChain('s')).toMatchObject({ status: 'broken', seq: 3 });
      });
      it('says a stream cut short no longer reaches its seal', async () => {
        const store = await forged((entries) => truncate(entries, 2));
        expect(await store.verifyChain('s')).toMatchObject({ status: 'broken', seq: 7 });
      });
      it('carries the parent\'s chain into a fork, sealed under its own name, and chains the fork\'s own appends', async () => {
        const current = await withEight();
        await current.store.fork('s', 5, { newStream: 'kid' });
        expect(await current.store.verifyChain('kid')).toMatchObject({ status: 'authenticated', head: 5, chainedFrom: 1 });
        await current.store.append('kid', drafts(6, 2), { expectedSeq: 5 });
        expect(await current.store.verifyChain('kid')).toMatchObject({ status: 'authenticated', head: 7 });
        expect((await current.rawChain('kid')).slice(0, 5)).toEqual((await current.rawChain('s')).slice(0, 5).map((entry) => ({ ...entry, record: { ...entry.record, stream: 'kid' } })));
      });
      it('authenticates a snapshot for the record it reflects: not one another key wrote, nor one whose record was changed since', async () => {
        const current = await withEight();
        await current.store.saveSnapshot('s', { seq: 6, version: 'm@1', at: 6, data: { n: 6 } });
        expect(await current.store.loadSnapshot('s')).toEqual({ seq: 6, version: 'm@1', at: 6, data: { n: 6 }, authenticated: true });
        const other = await current.withKey((await randomChainKey()));
        await other.append('t', drafts(1, 2), { expectedSeq: 0 });
        await other.saveSnapshot('t', { seq: 2, version: 'm@1', at: 2, data: { n: 2 } });
        expect(await current.store.loadSnapshot('t')).toMatchObject({ seq: 2, authenticated: false });
        // Relinked from record 5 on, record 6's chain field is no longer the one the snapshot was tagged for.
        const relinked = await current.forge('s', relinkFrom(changeRecord(await current.rawChain('s'), 4, { forged: true }), 4));
        expect(await relinked.loadSnapshot('s')).toMatchObject({ seq: 6, authenticated: false });
      });
    });

    describe('corruption and lifecycle', () => {
      it('detects a corrupted record instead of returning it', async () => {
        const { store, subject: current } = await withFive();
        await current.corrupt('s', 3);
        await expectCode(store.read('s'), 'STORE_CORRUPT_RECORD');
        await expectCode(store.read('s', { from: 3, to: 3 }), 'STORE_CORRUPT_RECORD');
        expect(seqs(await store.read('s', { to: 2 }))).toEqual([1, 2]);
        await expectCode(firstValueFrom(store.tail('s', 3)), 'STORE_CORRUPT_RECORD');
      });
      it('refuses operations after close', async () => {
        const { store } = await withFive();
        await store.close();
        await store.close();
        await expectCode(store.read('s'), 'STORE_CLOSED');
        await expectCode(store.append('s', drafts(6, 1), { expectedSeq: 5 }), 'STORE_CLOSED');
        await expectCode(store.streams(), 'STORE_CLOSED');
        await expectCode(firstValueFrom(store.tail('s')), 'STORE_CLOSED');
      });
      it('keeps records, heads, meta and snapshots across a reopen', async (context) => {
        const { store, subject: current } = await withFive();
        if (current.reopen === undefined) return context.skip();
        await store.fork('s', 2, { newStream: 'kid' });
        await store.saveSnapshot('s', { seq: 5, version: 'm@1', at: 5, data: { n: 5 } });
        const records = await store.read('s');
        const listed = await store.streams();
        const again = await current.reopen();
        expect(await again.read('s')).toEqual(records);
        expect(await again.head('s')).toBe(5);
        expect(await again.streams()).toEqual(listed);
        expect((await again.loadSnapshot('s'))?.data).toEqual({ n: 5 });
        await again.append('s', drafts(6, 1), { expectedSeq: 5 });
        await expectCode(again.append('s', drafts(6, 1), { expectedSeq: 5 }), 'STORE_CONFLICT');
        expect(await again.head('s')).toBe(6);
      });
    });
  });
}
