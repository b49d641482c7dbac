import type { ClassicLevel } from 'classic-level';
import type { RecordEnvelope } from '../models/envelope.js';
import type { StoredSnapshot, StreamSummary } from './event-store.js';
import { META_KEY, RECORD_KEYS, SNAPSHOT_KEYS, SUMMARY_KEY, SYNC_KEY, blobKey, deltaKey, isLayoutKey, keySeq, recordKey, snapshotKey } from './level-keys.js';
import { databaseExists, holdsData } from './level-stream-files.js';
import { checkIntegrity, writeWatermark, type Watermark } from './level-stream-integrity.js';
import { CHAIN_ORIGIN, sealTag, successorOf, type StreamSeal } from './chain.js';
import type { ChainKey } from './chain-crypto.js';
import { damagedLog } from './level-log-check.js';
import { decodeStreamMeta, decodeSummary } from './level-stream-meta.js';
import type { StreamMeta } from './level-stream-meta.js';
import { rangeLength, verifyPosition } from './read-range.js';
import type { SeqRange } from './read-range.js';
import { attachExternal } from './record-drafts.js';
import { decodeStoredValue } from './record-groups.js';
import type { ExternalString } from './record-drafts.js';
import { decodeValue } from './record-codec.js';
import { WriteAheadLogs } from './level-log-sync.js';
import { StreamBlobIndex } from './level-blob-index.js';
import { readStreamBlob } from './level-blob-read.js';
import { CorruptRecordError, storeErrorOfLevel } from './store-errors.js';

type Database = ClassicLevel<string, Uint8Array>;

/** One write of a batch: a put of stored bytes under a key (the shape classic-level takes as is). */
export interface StreamWrite {
  type: 'put';
  key: string;
  value: Uint8Array;
}

const PAGE_SIZE = 1000;
/**
 * A stream closed after writing more than this folds its write-ahead log into a table: LevelDB would otherwise keep
 * up to a write buffer (1 MiB) of uncompressed log on disk, and every later open (a reading command's copy included)
 * replays it. Smaller logs are left alone, so closing one of many small streams (a delegation's children) costs nothing.
 */
const FOLD_LOG_BYTES = 256 * 1024;
/** A key after every key a stream database holds: compacting `[FOLD_KEY, FOLD_KEY]` flushes the memtable and nothing else. */
const FOLD_KEY = '~';
const PAGE_BYTES = 1024 * 1024;
const EMPTY = new Uint8Array(0);
/** A batch write's options, shared (nothing changes them): an object per write was garbage per step. */
const syncedWrite = Object.freeze({ sync: true });
const unsyncedWrite = Object.freeze({ sync: false });

/** Every `code` along an error's chain of causes (classic-level wraps the native error in a not-open error). */
function levelErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let current = error; typeof current === 'object' && current !== null; current = (current as Error).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/**
 * classic-level options of every stream database: a 1 MiB write buffer and block cache and a modest file budget, so
 * hundreds of streams can be open at once. Blocks are 64 KiB rather than LevelDB's 4 KiB: consecutive records repeat
 * most of their strings (types, actors, field names, policy digests), and Snappy only finds a repeat within its
 * block, so larger blocks roughly halve what a step costs on disk. Exported so benchmarks open their baseline
 * databases the same way.
 */
export const STREAM_DATABASE_OPTIONS = Object.freeze({
  keyEncoding: 'utf8',
  valueEncoding: 'view',
  writeBufferSize: 1024 * 1024,
  cacheSize: 1024 * 1024,
  blockSize: 64 * 1024,
  maxOpenFiles: 64,
} as const);

/** What `openLevelStream` needs. */
export interface OpenLevelStreamOptions {
  directory: string;
  stream: string;
  /** Create the database when it does not exist (only appends and forks do). */
  create: boolean;
  /** The directory is a throwaway copy of a database another process owns. */
  copy: boolean;
  /** A copy opened for a chain check: a head below the clean-close watermark is reported by the check, not raised. */
  tolerateCutShort?: boolean;
}

/**
 * One open stream database with its head and meta cached. It holds the LevelDB lock until `close`, which makes any
 * unsynced write durable and records the head in the watermark before closing the database.
 */
export class LevelStream {
  readonly stream: string;
  readonly directory: string;
  readonly copy: boolean;
  head: number;
  meta: StreamMeta | undefined;
  /** The writer's summary of the stream (`m!summary`), when one was written and reads back whole. */
  summary: StreamSummary | undefined;
  /** A batch was written without sync since the last synced write. */
  unsynced = false;
  /** The highest seq known to be on stable storage (the head after a synced write, or when a sync started). */
  durableHead: number;
  readonly #database: Database;
  #watermark: Watermark;
  /**
   * What the next append's chain starts from (the head record's chain field, or the walk's digest when it has none),
   * once an append or a check needed it; kept up to date by appends. See `chainPredecessor`.
   */
  predecessor: Uint8Array | undefined;
  /** The key appends chained with: `close` seals the stream with it. */
  chainKey: ChainKey | undefined;
  #syncing: Promise<void> | undefined;
  /** The database's write-ahead logs, fdatasynced by `sync`. */
  readonly #logs: WriteAheadLogs;
  /** Which blobs the stream may hold (`storedBlobs`). */
  readonly #blobIndex: StreamBlobIndex;
  /** Bytes written since open (what the write-ahead log and memtable hold, at most). */
  #logged = 0;
  /**
   * The last blob this process appended to the stream, the base the next one is stored against (blob-deltas.ts), with
   * the number of deltas between it and a whole blob. Unset after open: the first blob appended is stored whole.
   */
  lastBlob: { hex: string; bytes: Uint8Array; depth: number } | undefined;

  constructor(options: OpenLevelStreamOptions & { database: Database; head: number; meta: StreamMeta | undefined; summary?: StreamSummary; watermark: Watermark }) {
    this.stream = options.stream;
    this.summary = options.summary;
    this.directory = options.directory;
    this.copy = options.copy;
    this.head = options.head;
    this.meta = options.meta;
    this.#database = options.database;
    this.#watermark = options.watermark;
    this.durableHead = options.head;
    this.#logs = new WriteAheadLogs({
      directory: options.directory,
      stream: options.stream,
      syncedWrite: () => this.#levelCall(() => this.#database.put(SYNC_KEY, EMPTY, { sync: true })),
    });
    this.#blobIndex = new StreamBlobIndex(async (bounds) => this.#levelCall(() => this.#database.keys(bounds).all()));
  }

  /**
   * Writes the puts as one atomic LevelDB batch. Built as a chained batch: classic-level's array form spends about
   * twice the main-thread time per put (abstract-level's checks and copies of the operations array), and in the
   * relaxed mode this call was 14% of a round trip's CPU profile.
   */
  async write(writes: readonly StreamWrite[], sync: boolean): Promise<void> {
    // `#levelCall`'s error mapping written out: one async frame per write rather than three (every step's append).
    try {
      const batch = this.#database.batch();
      try {
        for (const write of writes) {
          batch.put(write.key, write.value);
          this.#logged += write.key.length + write.value.length;
          // Indexed before the write: an entry for a blob the write then failed to store only costs a read.
          this.#blobIndex.noteWrite(write.key);
        }
      } catch (error) {
        await batch.close();
        throw error;
      }
      await batch.write(sync ? syncedWrite : unsyncedWrite);
    } catch (error) {
      throw storeErrorOfLevel(this.stream, error);
    }
    this.unsynced = !sync;
  }

  /** After a synced write: everything up to the (already updated) head is durable. */
  markSynced(): void {
    this.durableHead = this.head;
    this.onSync?.(this.durableHead);
  }

  /**
   * Which of `hexes` the stream already stores as blobs, whole or as a delta. Answered from the stream's blob index
   * (`StreamBlobIndex`) without reading the database for a blob it cannot hold — every append of a model input, so nearly
   * every round trip. That read was one LevelDB get of two absent keys per round trip, on the append's critical path,
   * and each absent key probed every table, which charged LevelDB's seek counter until it compacted level 1 into level
   * 2 every few hundred round trips — rewriting the whole stream each time, so a cost that grew with the session.
   * Only a hex the index may hold (one this stream stored, or a rare prefix collision) is read to be sure.
   */
  async storedBlobs(hexes: readonly string[]): Promise<Set<string>> {
    const candidates = await this.#blobIndex.candidates(hexes);
    const stored = new Set<string>();
    if (candidates.length === 0) return stored;
    const keys = candidates.flatMap((hex) => [blobKey(hex), deltaKey(hex)]);
    const values = await this.#levelCall(() => this.#database.getMany(keys));
    candidates.forEach((hex, position) => {
      if (values[2 * position] !== undefined || values[2 * position + 1] !== undefined) stored.add(hex);
    });
    return stored;
  }

  /**
   * `storedBlobs` without a read or an await, when the blob index answers alone (loaded, and none of `hexes` may be
   * stored: a step's new model input); undefined when it cannot (then await `storedBlobs`).
   */
  storedBlobsNow(hexes: readonly string[]): Set<string> | undefined {
    const candidates = this.#blobIndex.candidatesNow(hexes);
    return candidates === undefined || candidates.length > 0 ? undefined : new Set<string>();
  }

  /**
   * A stream blob's bytes, rebuilt through its chain of deltas and checked against its BLAKE3: `'missing'` when the
   * stream holds no such blob, `'damaged'` when it does but the bytes (or a link of the chain) are gone or altered.
   */
  async blobBytes(hex: string): Promise<Uint8Array | 'missing' | 'damaged'> {
    return readStreamBlob(hex, this.stream, (keys) => this.#levelCall(() => this.#database.getMany(keys)));
  }

  /** Every key and stored value in `[gte, lt)`, unchecked (fork copies stream blobs with it). */
  async rawEntries(bounds: { gte: string; lt: string }): Promise<Array<[string, Uint8Array]>> {
    return this.#levelCall(() => this.#database.iterator(bounds).all());
  }

  /**
   * The first key of this database that fits none of the stream's key layout (`isLayoutKey`) — the trace a damaged
   * table block leaves — or undefined. Reads every key: for telling damage from absence after a read failed.
   */
  async damagedKey(): Promise<string | undefined> {
    return this.#levelCall(async () => {
      for await (const key of this.#database.keys()) if (!isLayoutKey(key)) return key;
      return undefined;
    });
  }

  /** The stored bytes under `key`, unchecked (for test hooks that damage a value). */
  async rawValue(key: string): Promise<Uint8Array | undefined> {
    return this.#levelCall(() => this.#database.get(key));
  }

  /**
   * Runs one LevelDB operation with its failure said in rein's codes: a corrupt block is `STORE_CORRUPT_RECORD`, an
   * I/O error `STORE_IO` (docs/errors.md: *Error codes*), wherever in the stream's life it shows up, not only at open.
   */
  async #levelCall<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw storeErrorOfLevel(this.stream, error);
    }
  }

  /**
   * Makes every earlier unsynced batch durable (group commit) by fdatasyncing the database's write-ahead logs
   * (`WriteAheadLogs.sync`). Waits for a sync already in flight, so when it resolves every write made before the call is durable.
   */
  async sync(): Promise<void> {
    while (this.#syncing !== undefined) await this.#syncing.catch(() => undefined);
    if (!this.unsynced) {
      // Every completed write was synced (a synced write flushes the log before it): the head is durable.
      if (this.head > this.durableHead) this.markSynced();
      return;
    }
    this.unsynced = false;
    // Every write that completed before this point is covered: its log record is in a log file `#logs.sync` syncs.
    const covered = this.head;
    const syncing = this.#logs.sync().catch((error: unknown) => {
      this.unsynced = true;
      throw error;
    });
    this.#syncing = syncing;
    try {
      await syncing;
      this.durableHead = Math.max(this.durableHead, covered);
      this.onSync?.(this.durableHead);
    } finally {
      this.#syncing = undefined;
    }
  }

  /** Called after every fsync of this database with the head it made durable (the store's `onSync` hook). */
  onSync: ((durableHead: number) => void) | undefined;

  /** Reads exactly the seqs of `range`, in bulk; a missing or misplaced record is `CorruptRecordError`. */
  async read(range: SeqRange): Promise<RecordEnvelope[]> {
    return this.#levelCall(() => this.#readRange(range));
  }

  /** Reads exactly the seqs of `range` (forwards) with each record's chain field (undefined: written before the chain). */
  async readChained(range: SeqRange): Promise<Array<{ record: RecordEnvelope; field: Uint8Array | undefined }>> {
    const fields: Array<Uint8Array | undefined> = [];
    const records = await this.#levelCall(() => this.#readRange({ ...range, reverse: false }, fields));
    return records.map((record, index) => ({ record, field: fields[index] }));
  }

  /**
   * What the next append's chain starts from: nothing for an empty stream, the head record's chain field, or — for a
   * stream whose head was written before the chain — the digest a walk over every record gives (read once: the upgrade).
   */
  async chainPredecessor(): Promise<Uint8Array> {
    if (this.predecessor !== undefined) return this.predecessor;
    if (this.head === 0) return (this.predecessor = CHAIN_ORIGIN);
    const [last] = await this.readChained({ low: this.head, high: this.head, reverse: false });
    if (last?.field !== undefined) return (this.predecessor = last.field);
    let predecessor = CHAIN_ORIGIN;
    for (let low = 1; low <= this.head; low += PAGE_SIZE) {
      for (const { record, field } of await this.readChained({ low, high: Math.min(this.head, low + PAGE_SIZE - 1), reverse: false })) predecessor = successorOf(predecessor, record, field);
    }
    return (this.predecessor = predecessor);
  }

  /**
   * The seal the last clean close recorded, if it has one; a head the stream no longer reaches counts as one (its tag
   * empty) even without it, so a check reports records cut off its end.
   */
  get seal(): StreamSeal | undefined {
    const { head, seal } = this.#watermark;
    if (seal !== undefined && /^[0-9a-f]{32}$/.test(seal)) return { head, tag: Buffer.from(seal, 'hex') };
    return head > this.head ? { head, tag: new Uint8Array(0) } : undefined;
  }

  async #readRange(range: SeqRange, fields?: Array<Uint8Array | undefined>): Promise<RecordEnvelope[]> {
    const records: RecordEnvelope[] = [];
    const wanted = rangeLength(range);
    // The first key at or after `low` holds `low`: its own record, or the group (keyed by its last seq) holding it.
    // Every value holds at least one record, so asking for as many values as records are still wanted reads no more
    // than the range needs. Reverse reads are read forwards and turned around.
    const iterator = this.#database.iterator({ gte: recordKey(range.low), lt: RECORD_KEYS.lt, highWaterMarkBytes: PAGE_BYTES });
    const external: Array<{ record: RecordEnvelope; externals: ExternalString[] }> = [];
    try {
      reading: while (records.length < wanted) {
        const page = await iterator.nextv(Math.min(PAGE_SIZE, wanted - records.length));
        if (page.length === 0) break;
        for (const [key, stored] of page) {
          // A page may run past the range (a value holds one record or more): decode nothing beyond it.
          if (records.length >= wanted) break reading;
          const seq = keySeq(key);
          if (seq === undefined) throw new CorruptRecordError(this.stream, undefined, `unreadable record key ${key}`);
          for (const { record, externals, field } of decodeStoredValue(stored, this.stream, seq)) {
            if (record.seq < range.low) continue;
            if (record.seq > range.high) break reading;
            verifyPosition(this.stream, record, range.low + records.length);
            records.push(record);
            fields?.push(field);
            if (externals !== undefined) external.push({ record, externals });
          }
        }
      }
    } finally {
      await iterator.close();
    }
    if (external.length > 0) await this.#attachExternals(external);
    if (records.length !== wanted) {
      throw new CorruptRecordError(this.stream, range.low + records.length, 'record is missing');
    }
    if (range.reverse) records.reverse();
    return records;
  }

  /**
   * Puts back the long strings external rows keep in the stream's blobs, each checked against its BLAKE3; a missing or
   * altered blob is `CorruptRecordError` naming the record.
   */
  async #attachExternals(external: ReadonlyArray<{ record: RecordEnvelope; externals: ExternalString[] }>): Promise<void> {
    const wanted = [...new Set(external.flatMap((entry) => entry.externals.map((item) => item.hex)))];
    const texts = new Map<string, string | undefined>();
    for (const hex of wanted) {
      const bytes = await this.blobBytes(hex);
      texts.set(hex, typeof bytes === 'string' ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    }
    for (const { record, externals } of external) {
      for (const item of externals) {
        const text = texts.get(item.hex);
        if (text === undefined) throw new CorruptRecordError(this.stream, record.seq, `the blob of its string at ${item.path.join('.')} is missing or damaged`);
        attachExternal(record, item, text);
      }
    }
  }

  /** The latest snapshot with seq at or before `atOrBefore` (any seq when absent). */
  async loadSnapshot(atOrBefore: number | undefined): Promise<StoredSnapshot | undefined> {
    const upper = atOrBefore === undefined ? { lt: SNAPSHOT_KEYS.lt } : { lte: snapshotKey(atOrBefore) };
    const entries = await this.#levelCall(() => this.#database.iterator({ gte: SNAPSHOT_KEYS.gte, ...upper, reverse: true, limit: 1 }).all());
    const [entry] = entries;
    if (entry === undefined) return undefined;
    return decodeValue(entry[1], { stream: this.stream, seq: keySeq(entry[0]) }) as StoredSnapshot;
  }

  /**
   * Makes unsynced writes durable, records the head as the watermark with the stream's seal (not in copies), folds a
   * large write-ahead log into a table (`FOLD_LOG_BYTES`), and closes the database.
   */
  async close(): Promise<void> {
    try {
      if (!this.copy) {
        await this.sync();
        if (this.head > this.#watermark.head) {
          const watermark: Watermark = { head: this.head };
          if (this.chainKey !== undefined && this.predecessor !== undefined) watermark.seal = Buffer.from(sealTag(this.chainKey, this.stream, this.head, this.predecessor)).toString('hex');
          await writeWatermark(this.directory, watermark);
          this.#watermark = watermark;
        }
        if (this.#logged > FOLD_LOG_BYTES) await this.#levelCall(() => this.#database.compactRange(FOLD_KEY, FOLD_KEY));
      }
    } finally {
      await this.#logs.close();
      await this.#database.close();
    }
  }
}

/**
 * Opens a stream database: reads its meta (checking the codec), derives the head with one reverse key read, and
 * checks integrity. Resolves `'missing'` when it does not exist and `create` is false (nothing is created), and
 * `'locked'` when another process or store instance holds it.
 */
export async function openLevelStream(options: OpenLevelStreamOptions): Promise<LevelStream | 'missing' | 'locked'> {
  if (!options.create && !(await databaseExists(options.directory))) {
    // No CURRENT file: a stream never created — or one whose CURRENT was lost, which must not look like no stream.
    if (await holdsData(options.directory)) throw new CorruptRecordError(options.stream, undefined, 'the LevelDB CURRENT file is missing but the stream holds data');
    return 'missing';
  }
  // In place, LevelDB's recovery would drop what follows damage in the log, for good: refuse instead, changing nothing.
  if (!options.copy && (await databaseExists(options.directory))) {
    const damage = await damagedLog(options.directory);
    if (damage !== undefined) {
      throw new CorruptRecordError(options.stream, undefined, `its write-ahead log ${damage}; not opened in place, where LevelDB's recovery would drop what follows the damage (the stream is left as it is, for repair)`);
    }
  }
  // Loaded on the first open, not on import: a host on the in-memory or PostgreSQL store never loads the native addon.
  // `default` is module.exports both in Node (classic-level is CommonJS) and in the CLI bundle, whose split chunk of
  // a CommonJS package exports nothing else.
  const { ClassicLevel: Level } = ((await import('classic-level')) as unknown as { default: typeof import('classic-level') }).default;
  const database: Database = new Level<string, Uint8Array>(options.directory, {
    ...STREAM_DATABASE_OPTIONS,
    createIfMissing: options.create,
  });
  try {
    await database.open();
  } catch (error) {
    const codes = levelErrorCodes(error);
    if (codes.includes('LEVEL_LOCKED')) return 'locked';
    if (codes.includes('LEVEL_CORRUPTION')) throw new CorruptRecordError(options.stream, undefined, 'LevelDB cannot open the database', { cause: error });
    throw storeErrorOfLevel(options.stream, error);
  }
  try {
    const storedMeta = await database.get(META_KEY);
    const meta = storedMeta === undefined ? undefined : decodeStreamMeta(options.stream, storedMeta);
    const [lastKey] = await database.keys({ ...RECORD_KEYS, reverse: true, limit: 1 }).all();
    const head = lastKey === undefined ? 0 : keySeq(lastKey);
    if (head === undefined) throw new CorruptRecordError(options.stream, undefined, `unreadable record key ${String(lastKey)}`);
    // The meta key is written in the same batch as a stream's first records, so records without it are damage: a
    // damaged table's filter block can make LevelDB answer "not found" for a key it holds, which must not read as
    // "no such session".
    if (meta === undefined && head > 0) throw new CorruptRecordError(options.stream, undefined, 'the stream holds records but its meta key cannot be read');
    const watermark = await checkIntegrity({ directory: options.directory, stream: options.stream, head, copy: options.copy, ...(options.tolerateCutShort ? { tolerateCutShort: true } : {}) });
    const summary = decodeSummary(await database.get(SUMMARY_KEY));
    return new LevelStream({ ...options, database, head, meta, watermark, ...(summary && summary.seq <= head ? { summary } : {}) });
  } catch (error) {
    await database.close();
    // A damaged table block is often first met here (the meta key, the last record key): rein's code, as in every read.
    throw storeErrorOfLevel(options.stream, error);
  }
}

