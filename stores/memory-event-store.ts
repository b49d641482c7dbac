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
import { MemoryBlobStore } from './memory-blob-store.js';
import { decodeRecord, encodeRecord, prepareBatch } from './record-drafts.js';
import { decodeValue } from './record-codec.js';
import { rangeLength, resolveReadRange, seqAt, verifyPosition } from './read-range.js';
import { ConcurrencyConflictError, CorruptRecordError, StoreError } from './store-errors.js';
import { assertExpectedSeq, assertForkPoint, assertSnapshot, assertSnapshotBound, refuseFence } from './store-arguments.js';
import { parseCounterPosition, readAllLimit } from './read-all.js';
import { assertStreamName, forkStreamName } from './stream-names.js';
import { namedDigestOf, refDigest } from './blob-hash.js';
import { prepareStreamBlobs, preparedStreamBlobs, verifiedBlob, type StreamBlob } from './stream-blobs.js';
import { TailHub } from './tail-hub.js';
import { randomChainKey, type ChainKey } from './chain-crypto.js';
import { CHAIN_ORIGIN, chainFields, sealTag, successorOf, type StreamSeal } from './chain.js';
import { checkChain, type ChainReport } from './chain-check.js';
import { checkedSnapshot, encodeTaggedSnapshot } from './chain-snapshots.js';

/** Options of `createMemoryEventStore`. */
export interface MemoryEventStoreOptions {
  /** Wall clock for `createdAt` (epoch ms); defaults to `Date.now`. */
  clock?: () => number;
  /**
   * The memory the store keeps its bytes in (a fresh one by default). Pass one to look at the stored bytes from
   * outside — tests damage them here, as they damage the files of a LevelDB store or the rows of a PostgreSQL one.
   */
  storage?: MemoryStorage;
  /**
   * The key that authenticates the chain of every appended record (docs/architecture.md: *The chain*). Default: the storage's own
   * key, a random one made on first use (a memory store is its own machine).
   */
  chainKey?: ChainKey;
}

/**
 * The bytes of a memory store: encoded records (with their checksums), stream blobs and snapshots per stream, and
 * the shared blobs. What a disk is to the LevelDB store.
 */
export class MemoryStorage {
  readonly streams = new Map<string, MemoryStream>();
  readonly blobs = new Map<string, Uint8Array>();
  /** The key of stores over this storage that were given none (made on first use). */
  chainKey: Promise<ChainKey> | undefined;
}

/** One stream's stored bytes. */
export interface MemoryStream {
  records: Uint8Array[];
  /** Each record's chain field, index for index (undefined: none). */
  chain: Array<Uint8Array | undefined>;
  /** The seal the last append left (docs/architecture.md: *The chain*). */
  seal?: StreamSeal;
  /** Blobs appended with the stream, by BLAKE3 hex. */
  blobs: Map<string, Uint8Array>;
  snapshots: Map<number, Uint8Array>;
  createdAt: number;
  forkedFrom?: { stream: string; seq: number };
  /** The writer's last summary (`AppendOptions.summary`), as JSON text, and the head it describes. */
  summary?: { readonly seq: number; readonly json: string };
}

/**
 * The in-memory EventStore: same contract and conformance suite as the LevelDB store, nothing persisted.
 * Records are kept encoded (with their checksum), so every read returns an isolated copy, and an append rejects what
 * cannot be encoded exactly as a persistent store does. They are kept in the compact layout (digests as hex): packing
 * digests into bytes saves disk, not memory worth the walk over every record's data (~3% of a round trip's CPU).
 */
export class MemoryEventStore implements EventStore {
  readonly capabilities: StoreCapabilities = { persistent: false, durableSync: false, crossProcessReads: false, globalOrder: true, fencing: false };
  readonly blobs: MemoryBlobStore;
  readonly #streams: Map<string, MemoryStream>;
  /**
   * Every appended record's stream and seq, in append order: the global order `readAll` walks (two flat lists, index
   * for index, rather than a pair per record: only `readAll` reads them, and appends should not pay for a read).
   */
  readonly #orderStreams: string[] = [];
  readonly #orderSeqs: number[] = [];
  readonly #clock: () => number;
  readonly #storage: MemoryStorage;
  readonly #chainKey: ChainKey | undefined;
  /** The chain key once known, so an append need not wait a turn for it. */
  #knownKey: ChainKey | undefined;
  readonly #tails = new TailHub((stream, options) => this.#readRecords(stream, options));
  #state: 'open' | 'closing' | 'closed' = 'open';

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    const storage = options.storage ?? new MemoryStorage();
    this.#storage = storage;
    this.#chainKey = options.chainKey;
    this.#knownKey = options.chainKey;
    this.#streams = storage.streams;
    this.blobs = new MemoryBlobStore(storage.blobs);
  }

  async append(stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> {
    this.#assertOpen();
    assertStreamName(stream);
    assertExpectedSeq(options?.expectedSeq);
    refuseFence(options);
    const batch = prepareBatch(stream, options.expectedSeq + 1, records, 'compact');
    // Neither is waited for when there is nothing to wait for (no blobs, the key known): an append is one turn.
    const blobs = options.blobs === undefined || options.blobs.length === 0 ? noBlobs : (preparedStreamBlobs(options.blobs) ?? (await prepareStreamBlobs(options.blobs)));
    const key = this.#knownKey ?? (await this.#key());
    const existing = this.#streams.get(stream);
    const head = existing?.records.length ?? 0;
    if (head !== options.expectedSeq) throw new ConcurrencyConflictError(stream, options.expectedSeq, head);
    if (batch.values.length === 0) return [];
    const chained = chainFields(key, existing === undefined ? CHAIN_ORIGIN : predecessorOf(stream, existing), batch.envelopes, batch.canonicals);
    const target = existing ?? this.#create(stream, undefined, options.createdAt);
    target.records.push(...batch.values);
    target.chain.push(...chained.fields);
    // Sealed with every append (`sealedOnAppend`): a keyed BLAKE3 of a block or two, hashed in JavaScript.
    target.seal = { head: target.records.length, tag: sealTag(key, stream, target.records.length, chained.next) };
    if (options.summary !== undefined) target.summary = keptSummary(target.records.length, options.summary, target.summary);
    for (const envelope of batch.envelopes) {
      this.#orderStreams.push(stream);
      this.#orderSeqs.push(envelope.seq);
    }
    // A blob `hashBlob` named is kept as it is (its caller may not change it: a model input of up to the context window
    // per step, copied for nothing); any other is copied, so a caller reusing its buffer cannot change what was stored.
    for (const blob of blobs) target.blobs.set(blob.hex, namedDigestOf(blob.bytes) === blob.hex ? blob.bytes : new Uint8Array(blob.bytes));
    this.#tails.notify(stream);
    return batch.envelopes;
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

  /** In append order across streams (`capabilities.globalOrder`); positions count records from 1. */
  async readAll(options?: ReadAllOptions): Promise<PositionedRecord[]> {
    this.#assertNotClosed();
    const limit = readAllLimit(options);
    const after = parseCounterPosition(options?.after);
    const page: PositionedRecord[] = [];
    for (let index = after; index < this.#orderStreams.length && page.length < limit; index++) {
      const stream = this.#orderStreams[index]!;
      const seq = this.#orderSeqs[index]!;
      const stored = this.#streams.get(stream)!.records[seq - 1]!;
      const record = decodeRecord(stored, stream, seq);
      verifyPosition(stream, record, seq);
      page.push({ position: String(index + 1), record });
    }
    return page;
  }

  async head(stream: string): Promise<number> {
    this.#assertNotClosed();
    assertStreamName(stream);
    return this.#streams.get(stream)?.records.length ?? 0;
  }

  async info(stream: string): Promise<StreamInfo | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const found = this.#streams.get(stream);
    return found === undefined ? undefined : describe(stream, found);
  }

  async streams(): Promise<StreamInfo[]> {
    this.#assertNotClosed();
    return [...this.#streams].map(([name, found]) => describe(name, found));
  }

  async streamNames(): Promise<string[]> {
    this.#assertNotClosed();
    return [...this.#streams.keys()].sort();
  }

  async fork(stream: string, atSeq: number, options?: ForkOptions): Promise<StreamInfo> {
    this.#assertOpen();
    assertStreamName(stream);
    const key = await this.#key();
    const parent = this.#streams.get(stream);
    if (parent === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
    assertForkPoint(stream, atSeq, parent.records.length);
    const name = options?.newStream ?? forkStreamName(stream, atSeq);
    assertStreamName(name);
    if (this.#streams.has(name)) throw new StoreError('STORE_STREAM_EXISTS', `stream ${name} already exists`);
    const copies = parent.records.slice(0, atSeq).map((stored, index) => {
      const record = decodeRecord(stored, stream, index + 1);
      return encodeRecord({ ...record, stream: name }, 'compact');
    });
    const child = this.#create(name, { stream, seq: atSeq });
    child.records.push(...copies);
    // The fork carries its parent's chain as it is (the stream is not in a record's digest), sealed under its own name.
    child.chain.push(...parent.chain.slice(0, atSeq));
    child.seal = { head: atSeq, tag: sealTag(key, name, atSeq, predecessorOf(name, child)) };
    for (let seq = 1; seq <= copies.length; seq++) {
      this.#orderStreams.push(name);
      this.#orderSeqs.push(seq);
    }
    for (const [hex, bytes] of parent.blobs) child.blobs.set(hex, bytes);
    this.#tails.notify(name);
    return describe(name, child);
  }

  /** Checks `stream`'s chain under this store's key (see `EventStore.verifyChain`); the seal is written with every append. */
  async verifyChain(stream: string): Promise<ChainReport> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const key = await this.#key();
    const found = this.#streams.get(stream);
    if (found === undefined) return { stream, head: 0, status: 'authenticated', keyId: key.id };
    return checkChain({ stream, head: found.records.length, pages: entriesOf(stream, found), key, seal: found.seal, sealedOnAppend: true });
  }

  async readBlob(stream: string, ref: string): Promise<Uint8Array> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const stored = this.#streams.get(stream)?.blobs.get(refDigest(ref));
    return stored === undefined ? this.blobs.get(ref as `artifact://${string}`) : verifiedBlob(ref, new Uint8Array(stored));
  }

  async saveSnapshot(stream: string, snapshot: StoredSnapshot): Promise<void> {
    this.#assertOpen();
    assertStreamName(stream);
    const found = this.#streams.get(stream);
    if (found === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
    assertSnapshot(snapshot, found.records.length);
    found.snapshots.set(snapshot.seq, encodeTaggedSnapshot(await this.#key(), stream, snapshot, found.chain[snapshot.seq - 1]));
  }

  async loadSnapshot(stream: string, options?: { atOrBefore?: number }): Promise<StoredSnapshot | undefined> {
    this.#assertNotClosed();
    assertStreamName(stream);
    assertSnapshotBound(options?.atOrBefore);
    const found = this.#streams.get(stream);
    if (found === undefined) return undefined;
    const limit = options?.atOrBefore ?? Number.POSITIVE_INFINITY;
    let best: number | undefined;
    for (const seq of found.snapshots.keys()) if (seq <= limit && (best === undefined || seq > best)) best = seq;
    if (best === undefined) return undefined;
    return checkedSnapshot(await this.#key(), stream, decodeValue(found.snapshots.get(best)!, { stream, seq: best }), found.chain[best - 1]);
  }

  async close(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'closing';
    await this.#tails.close();
    this.#state = 'closed';
  }

  async #readRecords(stream: string, options: ReadOptions | undefined): Promise<RecordEnvelope[]> {
    this.#assertNotClosed();
    assertStreamName(stream);
    const found = this.#streams.get(stream);
    const range = resolveReadRange(options, found?.records.length ?? 0);
    if (found === undefined || range === undefined) return [];
    const records: RecordEnvelope[] = [];
    for (let index = 0; index < rangeLength(range); index++) {
      const seq = seqAt(range, index);
      const stored = found.records[seq - 1];
      if (stored === undefined) throw new CorruptRecordError(stream, seq, 'record is missing');
      const record = decodeRecord(stored, stream, seq);
      verifyPosition(stream, record, seq);
      records.push(record);
    }
    return records;
  }

  /** This store's chain key: the one it was given, else its storage's (made on first use). */
  async #key(): Promise<ChainKey> {
    if (this.#chainKey !== undefined) return this.#chainKey;
    this.#storage.chainKey ??= randomChainKey();
    return (this.#knownKey = await this.#storage.chainKey);
  }

  #create(stream: string, forkedFrom?: { stream: string; seq: number }, createdAt?: number): MemoryStream {
    const created: MemoryStream = { records: [], chain: [], blobs: new Map(), snapshots: new Map(), createdAt: createdAt ?? this.#clock() };
    if (forkedFrom !== undefined) created.forkedFrom = forkedFrom;
    this.#streams.set(stream, created);
    return created;
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw new StoreError('STORE_CLOSED', 'the store is closed');
  }

  #assertNotClosed(): void {
    if (this.#state === 'closed') throw new StoreError('STORE_CLOSED', 'the store is closed');
  }
}

const noBlobs: readonly StreamBlob[] = Object.freeze([]);

/**
 * A writer's summary as the store keeps it: its JSON text, made at the append — or, for a deeply frozen value (the
 * session writer's running usage), which cannot change, when first read: a listing reads it, an append need not pay.
 */
class KeptSummary {
  #value: unknown;
  #json: string | undefined;

  constructor(
    readonly seq: number,
    value: unknown,
    frozen?: { value: unknown; json: string | undefined },
  ) {
    if (frozen !== undefined) {
      this.#value = frozen.value;
      this.#json = frozen.json;
    } else if (deeplyFrozen(value, 0)) this.#value = value;
    else this.#json = JSON.stringify(value);
  }

  /** Whether `value` is the deeply frozen value this summary keeps (the same object: it cannot have changed). */
  sameFrozen(value: unknown): boolean {
    return this.#value !== undefined && this.#value === value;
  }

  /** This summary's frozen value (and its JSON, if made) at another head. */
  at(seq: number): KeptSummary {
    return new KeptSummary(seq, undefined, { value: this.#value, json: this.#json });
  }

  get json(): string {
    return (this.#json ??= JSON.stringify(this.#value));
  }
}

/**
 * The summary to keep after an append: the last one's value moved to the new head when the writer passed the same
 * frozen value again (its running usage changes only with a model's response: most appends), so the value is walked
 * for being frozen once per change, not once per append.
 */
function keptSummary(seq: number, value: unknown, last: MemoryStream['summary']): KeptSummary {
  return last instanceof KeptSummary && last.sameFrozen(value) ? last.at(seq) : new KeptSummary(seq, value);
}

/** Whether nothing in a JSON-like value can change: every object and array in it plain and frozen (a few levels deep at most). */
function deeplyFrozen(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function';
  if (depth > 4 || !Object.isFrozen(value)) return false;
  // Only plain objects and arrays: a frozen Date or Map still changes inside.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== Array.prototype) return false;
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) if (!deeplyFrozen((value as Record<string, unknown>)[keys[index]!], depth + 1)) return false;
  return true;
}

/** A stream's records with their chain fields, one by one (each checked as a read checks it). */
async function* entriesOf(stream: string, found: MemoryStream): AsyncGenerator<Array<{ record: RecordEnvelope; field: Uint8Array | undefined }>> {
  for (let index = 0; index < found.records.length; index++) {
    const stored = found.records[index];
    if (stored === undefined) throw new CorruptRecordError(stream, index + 1, 'record is missing');
    const record = decodeRecord(stored, stream, index + 1);
    verifyPosition(stream, record, index + 1);
    yield [{ record, field: found.chain[index] }];
  }
}

/** What the next append to a stream starts its chain from: its head record's field, or (unchained) the walk's digest. */
function predecessorOf(stream: string, found: MemoryStream): Uint8Array {
  const head = found.records.length;
  const last = found.chain[head - 1];
  if (head === 0) return CHAIN_ORIGIN;
  if (last !== undefined) return last;
  let predecessor = CHAIN_ORIGIN;
  for (let index = 0; index < head; index++) predecessor = successorOf(predecessor, decodeRecord(found.records[index]!, stream, index + 1), found.chain[index]);
  return predecessor;
}

function describe(stream: string, found: MemoryStream): StreamInfo {
  const info: StreamInfo = { stream, head: found.records.length, createdAt: found.createdAt };
  if (found.forkedFrom !== undefined) info.forkedFrom = { ...found.forkedFrom };
  if (found.summary !== undefined) info.summary = { seq: found.summary.seq, value: JSON.parse(found.summary.json) as unknown };
  return info;
}

/** Creates an empty in-memory event store. */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): MemoryEventStore {
  return new MemoryEventStore(options);
}
