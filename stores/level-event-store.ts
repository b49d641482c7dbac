import { join } from 'node:path';
import type { Observable } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../models/envelope.js';
import type {
  AppendOptions,
  EventStore,
  ForkOptions,
  PositionedRecord,
  ReadAllOptions,
  ReadOptions,
  StoreCapabilities,
  StoredSnapshot,
  StreamInfo,
} from './event-store.js';
import type { ListingCache } from './event-store.js';
import { levelListingCache } from './level-listing-cache.js';
import { FileBlobStore } from './file-blob-store.js';
import { GroupCommitter } from './level-group-commit.js';
import { LevelSyncCommits } from './level-sync-commits.js';
import { blobWrites, blobWritesNow, wholeBlob } from './level-blob-writes.js';
import type { LevelEventStoreOptions } from './level-event-store.options.js';
import { META_KEY, SUMMARY_KEY, recordKey, snapshotKey } from './level-keys.js';
import { refDigest } from './blob-hash.js';
import { prepareStreamBlobs, preparedStreamBlobs } from './stream-blobs.js';
import { LevelCopyCache } from './level-locked-read.js';
import { LevelStreamAccess, writableStream } from './level-stream-access.js';
import { listStreamNames, streamDirectory } from './level-stream-files.js';
import { createStreamMeta, encodeStreamMeta, encodeSummary, isChainedMeta } from './level-stream-meta.js';
import { RECORD_CODEC_DESCRIPTOR } from './record-codec.js';
import { LevelChainKeys } from './level-chain-keys.js';
import { chainFields } from './chain.js';
import { checkChain, type ChainReport } from './chain-check.js';
import { checkedSnapshot, encodeTaggedSnapshot } from './chain-snapshots.js';
import { StreamCutShortError } from './level-stream-integrity.js';
import { LevelStreamPool } from './level-stream-pool.js';
import type { LevelStream, StreamWrite } from './level-stream.js';
import { resolveReadRange } from './read-range.js';
import { readAllByStream } from './read-all.js';
import { refuseFence } from './store-arguments.js';
import { prepareEnvelopes } from './record-drafts.js';
import { encodeAppend, encodeAppendNow, withChainFields } from './record-groups.js';
import { KeyedSerialQueue, mapWithLimit } from './task-queues.js';
import { assertExpectedSeq, assertSnapshot, assertSnapshotBound } from './store-arguments.js';
import { BlobError, ConcurrencyConflictError, StoreError } from './store-errors.js';
import { assertStreamName, forkStreamName } from './stream-names.js';
import { TailHub } from './tail-hub.js';
import { watchStreamDirectory } from './level-stream-watch.js';
import { readForkCopy, forkWrites } from './level-fork.js';
import { chainedPages, describe, fieldAt } from './level-stream-reads.js';

export type { LevelEventStoreOptions } from './level-event-store.options.js';

/** A settled promise handed out where nothing is waited for. */
const resolved: Promise<void> = Promise.resolve();

/** How many stream databases `streams()` opens at a time. */
const LISTING_CONCURRENCY = 8;



/**
 * The LevelDB EventStore (DESIGN §3): `<root>/streams/<stream>/` is one LevelDB database per stream and
 * `<root>/blobs/` the blob files. Appends to a stream are serialized in-process, so the `expectedSeq` check and the
 * single atomic batch that follows cannot interleave. A stream held by another process is still readable (through a
 * temporary copy) but appending to it raises `STORE_LOCKED`. A tail follows appends made by other processes too: its
 * stream's files are watched while it has tails (`followIntervalMs`).
 */
export class LevelEventStore implements EventStore {
  readonly capabilities: StoreCapabilities = { persistent: true, durableSync: true, crossProcessReads: true, globalOrder: false, fencing: false };
  readonly blobs: FileBlobStore;
  readonly #root: string;
  readonly #sync: boolean;
  readonly #clock: () => number;
  readonly #pool: LevelStreamPool;
  readonly #queue = new KeyedSerialQueue();
  readonly #tails: TailHub;
  readonly #committer: GroupCommitter;
  readonly #readOnly: boolean;
  /** Read-only mode: the throwaway copies reads go through, one per stream, kept until `close`. */
  readonly #copies: LevelCopyCache;
  /** Opens streams for reading: in place, or through a copy (held elsewhere, read-only, cut short). */
  readonly #access: LevelStreamAccess;
  readonly #onSync: ((stream: string, durableHead: number) => void) | undefined;
  /** Sync mode: the appends written with `sync: false` and the writers waiting for the fsync that covers them. */
  readonly #commits: LevelSyncCommits;
  /** The chain key, loaded on first need (see `LevelEventStoreOptions.chainKey`). */
  readonly #keys: LevelChainKeys;
  #state: 'open' | 'closing' | 'closed' = 'open';

  constructor(root: string, options: LevelEventStoreOptions = {}) {
    this.#root = root;
    this.#sync = (options.durability ?? 'sync') === 'sync';
    this.#clock = options.clock ?? Date.now;
    this.#readOnly = options.readOnly ?? false;
    this.#copies = new LevelCopyCache(options.readCopies ?? 16, { fresh: options.freshReads ?? false });
    const followIntervalMs = options.followIntervalMs ?? 200;
    // A tail follows appends other processes (or other store objects) make: its stream's files are watched while it
    // has tails. A read-only store's cached copy of the stream is then stale and is replaced on the next read.
    this.#tails = new TailHub(
      (stream, readOptions) => this.#readCommitted(stream, readOptions),
      (stream, wake) =>
        watchStreamDirectory(
          streamDirectory(root, stream),
          () => {
            if (this.#readOnly) this.#copies.invalidate(stream);
            wake();
          },
          // A stream open in place here is locked against every other writer: its tails hear of its appends directly.
          { intervalMs: followIntervalMs, idle: () => this.#pool.isOpen(stream) },
        ),
    );
    this.#onSync = options.onSync;
    this.#commits = new LevelSyncCommits({
      delayMs: options.commitDelayMs ?? 4,
      // Not in the stream's append queue: the fsync covers every write completed before it starts (LevelStream.sync),
      // and the next step's batch is written while it runs instead of waiting for the disk behind it.
      syncStream: (stream) =>
        this.#pool.with(stream, false, async (opened) => {
          if (typeof opened !== 'string') await opened.sync();
        }),
      notify: (stream) => this.#tails.notify(stream),
    });
    this.#keys = new LevelChainKeys({ given: options.chainKey, readOnly: this.#readOnly });
    this.#pool = new LevelStreamPool({ root, maxOpenStreams: options.maxOpenStreams ?? 64, onSync: (stream, durableHead) => this.#durable(stream, durableHead) });
    this.#access = new LevelStreamAccess({ root, pool: this.#pool, readOnly: this.#readOnly, copies: this.#copies });
    this.blobs = new FileBlobStore({ directory: join(root, 'blobs'), sync: true });
    this.#committer = new GroupCommitter({
      intervalMs: options.groupCommitIntervalMs ?? 50,
      commit: () => this.#pool.syncAll(),
    });
  }

  async append(stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> {
    this.#assertOpen();
    assertStreamName(stream);
    assertExpectedSeq(options?.expectedSeq);
    refuseFence(options);
    this.#committer.takeFailure();
    const expectedSeq = options.expectedSeq;
    const envelopes = prepareEnvelopes(stream, expectedSeq + 1, records);
    // Each of these is awaited only when it has to wait (a blob to hash, a long string to move, the key to load): a
    // session's append encodes and dispatches its batch without a turn of the event loop (a synced step's critical path).
    const blobs = preparedStreamBlobs(options.blobs) ?? (await prepareStreamBlobs(options.blobs));
    // Encoded before taking the stream's turn (record-groups.ts); the chain fields, which need the head's, are set in it.
    const groups = encodeAppendNow(envelopes) ?? (await encodeAppend(envelopes));
    const key = envelopes.length > 0 ? (this.#keys.knownWriterKey() ?? (await this.#keys.writerKey())) : undefined;
    return this.#queue.run(stream, () =>
      this.#pool.with(stream, envelopes.length > 0, async (opened) => {
        const target = writableStream(stream, opened);
        const head = target?.head ?? 0;
        if (head !== expectedSeq) throw new ConcurrencyConflictError(stream, expectedSeq, head);
        if (target === undefined || key === undefined || envelopes.length === 0) return [];
        // A stream an earlier build created starts its chain here (its records before are covered from here on).
        const chained = chainFields(key, target.predecessor ?? (await target.chainPredecessor()), envelopes);
        let offset = 0;
        const writes: StreamWrite[] = new Array(groups.length);
        for (let index = 0; index < groups.length; index++) {
          const group = groups[index]!;
          const count = group.lastSeq - envelopes[offset]!.seq + 1;
          const fields = groups.length === 1 ? chained.fields : chained.fields.slice(offset, offset + count);
          offset += count;
          writes[index] = { type: 'put', key: recordKey(group.lastSeq), value: withChainFields(group, fields).value };
        }
        const appended = blobWritesNow(target, blobs) ?? (await blobWrites(target, blobs));
        for (const write of appended.writes) writes.push(write);
        for (const group of groups) for (const blob of group.blobs) writes.push(wholeBlob(blob));
        const meta = target.meta === undefined ? createStreamMeta(options.createdAt ?? this.#clock()) : isChainedMeta(target.meta) ? target.meta : { ...target.meta, codec: RECORD_CODEC_DESCRIPTOR };
        if (meta !== target.meta) writes.push({ type: 'put', key: META_KEY, value: encodeStreamMeta(meta) });
        const summary = options.summary === undefined ? undefined : { seq: expectedSeq + envelopes.length, value: options.summary };
        if (summary) writes.push({ type: 'put', key: SUMMARY_KEY, value: encodeSummary(summary) });
        const durable = options.sync ?? this.#sync;
        await target.write(writes, durable);
        // Relaxed mode: the periodic group commit makes it durable. Sync mode: `commit` does, when the writer asks for
        // it; the periodic one as well was an extra fsync every 50 ms of a busy session (a third of its fsyncs), each
        // one slowing the LevelDB writes made while it ran.
        if (!durable && !this.#sync) this.#committer.schedule();
        target.meta = meta;
        if (summary) target.summary = summary;
        target.head = expectedSeq + envelopes.length;
        target.lastBlob = appended.last;
        target.predecessor = chained.next;
        target.chainKey = key;
        if (durable) target.markSynced();
        else if (this.#sync) this.#commits.written(stream, target.durableHead, target.head);
        // Sync mode: tails see an append made with `sync: false` once it is committed (`#durable`).
        if (durable || !this.#sync) this.#tails.notify(stream);
        return envelopes;
      }),
    );
  }

  async read(stream: string, options?: ReadOptions): Promise<RecordEnvelope[]> {
    this.#assertNotClosed();
    return this.#readRecords(stream, options);
  }

  /** Resolves once every tail of `stream` subscribed now has handed over every record up to `seq`; see `EventStore.delivered`. */
  delivered(stream: string, seq: number): Promise<void> {
    return this.#tails.delivered(stream, seq);
  }

  tail(stream: string, from?: number): Observable<RecordEnvelope> {
    assertStreamName(stream);
    return this.#tails.tail(stream, from);
  }

  /** Walks the streams one by one (`capabilities.globalOrder` is false): creation order, then seq. */
  async readAll(options?: ReadAllOptions): Promise<PositionedRecord[]> {
    this.#assertNotClosed();
    return readAllByStream(this, options);
  }

  async head(stream: string): Promise<number> {
    return (await this.info(stream))?.head ?? 0;
  }

  async info(stream: string): Promise<StreamInfo | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    return this.#access.withReadable(stream, async (opened) => describe(opened), undefined);
  }

  async streams(): Promise<StreamInfo[]> {
    this.#assertNotClosed();
    const names = await listStreamNames(this.#root);
    const found = await mapWithLimit(names, LISTING_CONCURRENCY, (stream) => this.info(stream));
    return found
      .filter((info): info is StreamInfo => info !== undefined)
      .sort((left, right) => left.createdAt - right.createdAt || (left.stream < right.stream ? -1 : 1));
  }

  #listingCache: ListingCache | undefined;

  /** A listing cache in `<root>/listing-cache.json`, validated by each stream directory's content signature. */
  listingCache(): ListingCache {
    return (this.#listingCache ??= levelListingCache(this.#root, (stream) => streamDirectory(this.#root, stream), this.#readOnly));
  }

  async streamNames(): Promise<string[]> {
    this.#assertNotClosed();
    return listStreamNames(this.#root);
  }

  async fork(stream: string, atSeq: number, options?: ForkOptions): Promise<StreamInfo> {
    this.#assertOpen();
    assertStreamName(stream);
    const name = options?.newStream ?? forkStreamName(stream, typeof atSeq === 'number' ? atSeq : 0);
    assertStreamName(name);
    const copy = await readForkCopy(this.#access, stream, atSeq, name);
    const key = await this.#keys.writerKey();
    return this.#queue.run(name, () =>
      this.#pool.with(name, true, async (opened) => {
        if (opened === 'locked' || (opened !== 'missing' && opened.meta !== undefined)) {
          throw new StoreError('STORE_STREAM_EXISTS', `stream ${name} already exists`);
        }
        const target = writableStream(name, opened)!;
        const meta = createStreamMeta(this.#clock(), { stream, seq: atSeq });
        await this.#write(target, forkWrites(copy, meta), undefined);
        target.meta = meta;
        target.head = atSeq;
        // Sealed at its close under its own name, when the fork point is chained (else its next append upgrades it).
        target.predecessor = copy.predecessor;
        target.chainKey = key;
        this.#tails.notify(name);
        return describe(target)!;
      }),
    );
  }

  /**
   * Checks `stream`'s chain under this store's key (see `EventStore.verifyChain`). The seal is the one the stream's
   * last clean close wrote (a crash leaves an older one, or none); a stream cut below it is broken there.
   */
  async verifyChain(stream: string): Promise<ChainReport> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const key = await this.#keys.readerKey();
    const keyId = key === undefined ? {} : { keyId: key.id };
    const check = async (opened: LevelStream): Promise<ChainReport> => {
      if (opened.meta === undefined) return { stream, head: 0, status: 'authenticated', ...keyId };
      return checkChain({ stream, head: opened.head, pages: chainedPages(opened), key, seal: opened.seal, sealedOnAppend: false });
    };
    try {
      return await this.#access.withReadable(stream, check, { stream, head: 0, status: 'authenticated' as const, ...keyId });
    } catch (error) {
      if (!(error instanceof StreamCutShortError)) throw error;
      // Cut below its last clean close: checked on a throwaway copy that opens anyway, so the report names the first
      // record concerned (an earlier forgery, or the first one cut off). A copy left with no readable record and no
      // meta (a damaged table) has nothing to check: the damage is the answer, never "no such session".
      return this.#access.withCutShort(stream, async (opened) => {
        if (opened.meta === undefined && opened.head === 0) throw error;
        return check(opened);
      });
    }
  }

  async readBlob(stream: string, ref: string): Promise<Uint8Array> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const hex = refDigest(ref);
    const stored = await this.#access.withReadable(stream, (opened) => opened.blobBytes(hex), undefined);
    if (stored === undefined || stored === 'missing') {
      try {
        return await this.blobs.get(ref as `artifact://${string}`);
      } catch (error) {
        // Absent from the stream and the shared store: damage when the stream holds a key a damaged block garbled.
        if (stored === 'missing' && (error as { code?: unknown }).code === 'BLOB_NOT_FOUND') {
          const garbled = await this.#access.withReadable(stream, (opened) => opened.damagedKey(), undefined);
          if (garbled !== undefined) throw new BlobError('BLOB_CORRUPT', ref, { detail: `stream ${stream} holds a garbled key (a damaged LevelDB table block), so it cannot be read back` });
        }
        throw error;
      }
    }
    if (stored === 'damaged') throw new BlobError('BLOB_CORRUPT', ref);
    return stored;
  }

  async saveSnapshot(stream: string, snapshot: StoredSnapshot): Promise<void> {
    this.#assertOpen();
    assertStreamName(stream);
    const key = await this.#keys.writerKey();
    await this.#queue.run(stream, () =>
      this.#pool.with(stream, false, async (opened) => {
        const target = writableStream(stream, opened);
        if (target?.meta === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
        assertSnapshot(snapshot, target.head);
        // Tagged for the chain field of the record it reflects (see chain-snapshots.ts).
        const value = encodeTaggedSnapshot(key, stream, snapshot, await fieldAt(target, snapshot.seq));
        await this.#write(target, [{ type: 'put', key: snapshotKey(snapshot.seq), value }], undefined);
      }),
    );
  }

  /** The latest snapshot (at or before `atOrBefore`), `authenticated` when this store's key tagged it for the record its seq holds. */
  async loadSnapshot(stream: string, options?: { atOrBefore?: number }): Promise<StoredSnapshot | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    assertSnapshotBound(options?.atOrBefore);
    const key = await this.#keys.readerKey();
    return this.#access.withReadable(
      stream,
      async (opened) => {
        const stored = await opened.loadSnapshot(options?.atOrBefore);
        return stored === undefined ? undefined : checkedSnapshot(key, stream, stored, await fieldAt(opened, stored.seq));
      },
      undefined,
    );
  }

  /**
   * Group commit (see `EventStore.commit`). Sync mode: resolves once an fsync covered `seq`, waiting up to
   * `commitDelayMs` for more `sync: false` appends to share it. Relaxed mode: at once (an acknowledged append is a
   * written one; the periodic group commit makes it durable).
   */
  commit(stream: string, seq: number): Promise<void> {
    // Not async: the commit's own promise is returned as it is (a writer asks for one with every batch).
    try {
      this.#assertNotClosed();
      assertStreamName(stream);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!this.#sync) return resolved;
    return this.#commits.commit(stream, seq);
  }

  /** Closes `stream`'s database (and so its LevelDB lock) once no operation uses it; see `EventStore.release`. */
  async release(stream: string): Promise<void> {
    this.#assertNotClosed();
    assertStreamName(stream);
    if (this.#readOnly || this.#state !== 'open') return;
    await this.#pool.release(stream);
  }

  /** Opens `stream`'s database in place and keeps it open (its lock is this process's) until the hold ends; see `EventStore.hold`. */
  async hold(stream: string): Promise<() => Promise<void>> {
    this.#assertOpen();
    assertStreamName(stream);
    const pinned = await this.#queue.run(stream, () => this.#pool.with(stream, false, async (opened) => writableStream(stream, opened) !== undefined && this.#pool.pin(stream)));
    let ended = !pinned;
    return async () => {
      if (ended) return;
      ended = true;
      this.#pool.unpin(stream);
    };
  }

  /** Makes every unsynced append durable now (relaxed mode); resolves when the fsyncs are done. */
  async flush(): Promise<void> {
    this.#assertNotClosed();
    await this.#committer.flush();
  }

  /** Waits for queued appends, completes every tail after it drained, then syncs and closes every stream database. */
  async close(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'closing';
    try {
      await this.#queue.idle();
      // Commit what sync-mode writers still wait for, so their tails and acknowledgements see it before closing.
      await this.#commits.commitAll();
      await this.#tails.close();
      this.#committer.stop();
      await this.#pool.closeAll();
      await this.#copies.close();
    } finally {
      this.#state = 'closed';
    }
  }

  async #readRecords(stream: string, options: ReadOptions | undefined): Promise<RecordEnvelope[]> {
    this.#assertNotClosed();
    assertStreamName(stream);
    resolveReadRange(options, 0);
    const records = await this.#access.withReadable(
      stream,
      async (opened) => {
        const range = resolveReadRange(options, opened.head);
        return range === undefined ? [] : opened.read(range);
      },
      undefined,
    );
    return records ?? [];
  }

  /** Writes a batch, fsynced unless `sync` (or the relaxed mode) says otherwise; resolves whether it was (`append` does the same inline). */
  async #write(target: LevelStream, writes: readonly StreamWrite[], sync: boolean | undefined): Promise<boolean> {
    const durable = sync ?? this.#sync;
    await target.write(writes, durable);
    if (!durable && !this.#sync) this.#committer.schedule();
    return durable;
  }

  /** A stream's durable head moved (any fsync of its database): tell `onSync`, release the writers waiting on it. */
  #durable(stream: string, durableHead: number): void {
    this.#onSync?.(stream, durableHead);
    this.#commits.durable(stream, durableHead);
  }

  /** What a tail reads: in sync mode only committed records (up to the durable head of a stream with pending appends). */
  async #readCommitted(stream: string, options: ReadOptions): Promise<RecordEnvelope[]> {
    const durableHead = this.#commits.durableHeadOf(stream);
    if (durableHead === undefined) return this.#readRecords(stream, options);
    const to = Math.min(options.to ?? Number.MAX_SAFE_INTEGER, durableHead);
    return to < (options.from ?? 1) ? [] : this.#readRecords(stream, { ...options, to });
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw new StoreError('STORE_CLOSED', 'the store is closed');
    if (this.#readOnly) throw new StoreError('STORE_READ_ONLY', 'the store was opened read-only');
  }

  #assertNotClosed(): void {
    if (this.#state === 'closed') throw new StoreError('STORE_CLOSED', 'the store is closed');
  }
}

/**
 * Opens a LevelDB event store rooted at `root`. Nothing is created until the first write (reading an empty or
 * missing root lists no streams), and stream databases open lazily.
 */
export async function openLevelEventStore(root: string, options: LevelEventStoreOptions = {}): Promise<LevelEventStore> {
  return new LevelEventStore(root, options);
}
