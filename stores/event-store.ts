import type { Observable } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../models/envelope.js';
import type { BlobStore } from './blob-store.js';
import type { ChainReport } from './chain-check.js';

/** Options of `EventStore.append`. */
export interface AppendOptions {
  /** The head seq the writer believes the stream has (0 for a new stream). A mismatch writes nothing. */
  expectedSeq: number;
  /** Override the store's durability for this batch: `true` fsyncs before resolving. */
  sync?: boolean;
  /**
   * Blobs written into this stream in the same atomic batch as the records (so a record can reference one and never
   * dangle), addressed like every blob as `artifact://blake3/<hex>`; read them back with `readBlob`.
   */
  blobs?: ReadonlyArray<Uint8Array | string>;
  /**
   * Append only while the stream's lease is held by this owner at this epoch, checked inside the append's own
   * transaction (`STORE_FENCED` otherwise, nothing written). Stores without `capabilities.fencing` refuse it
   * (`STORE_INVALID_ARGUMENT`): they have no leases.
   */
  fence?: AppendFence;
  /** The creation time (epoch ms) of a stream this append creates (default: the store's clock); for copying stores. */
  createdAt?: number;
  /** The session status this batch leaves the stream in, for stores that index it (`StreamInfo.status`); others ignore it. */
  status?: string;
  /**
   * A small JSON value the writer keeps about the whole stream as this batch leaves it (the session host: its running
   * token usage), for a listing to read from `StreamInfo.summary` without reading records. Stores that keep it store
   * it in the same atomic batch, with the head it describes; others ignore it. A cache, never the truth: a reader
   * that finds it behind the head (or absent) folds the records after it (or the whole log).
   */
  summary?: unknown;
}

/** A lease's owner and epoch, as `AppendOptions.fence` checks them. */
export interface AppendFence {
  owner: string;
  epoch: number;
}

/** Options of `EventStore.streamPage`. */
export interface StreamPageOptions {
  status?: string;
  /** The last stream of the previous page. */
  after?: StreamInfo;
  /** At most this many streams (default 1000). */
  limit?: number;
}

/** Options of `EventStore.readAll`. */
export interface ReadAllOptions {
  /** Continue after this position (one a `readAll` of the same store returned); from the beginning when absent. */
  after?: string;
  /** At most this many records (default 1000). */
  limit?: number;
}

/** A record and its place in the store's global order. Positions are opaque strings that only their store compares. */
export interface PositionedRecord {
  position: string;
  record: RecordEnvelope;
}

/** Options of `EventStore.read`: an inclusive seq range, an optional count limit, and the direction. */
export interface ReadOptions {
  from?: number;
  to?: number;
  limit?: number;
  reverse?: boolean;
}

/** What the store knows about one stream without reading its records. */
export interface StreamInfo {
  stream: string;
  head: number;
  createdAt: number;
  /** Set on streams made by `fork`: the parent stream and the seq the fork copied up to. */
  forkedFrom?: { stream: string; seq: number };
  /** The session status the last append that named one left (stores that index it only; see `AppendOptions.status`). */
  status?: string;
  /** The last `AppendOptions.summary` written and the head it describes (stores that keep it only). */
  summary?: StreamSummary;
}

/** A writer's summary of a stream (`AppendOptions.summary`) and the seq it describes the stream up to. */
export interface StreamSummary {
  seq: number;
  value: unknown;
}

/** A persisted snapshot: an optimisation only, keyed by the seq it reflects and the version of what produced it. */
export interface StoredSnapshot {
  seq: number;
  version: string;
  at: number;
  data: unknown;
  /**
   * Set by `loadSnapshot`: whether this store's chain key wrote the snapshot for the record its seq holds now
   * (docs/architecture.md: *The chain*). A snapshot that is not (written elsewhere, altered, or its record changed since) must not
   * stand in for the log: resume replays the log in full instead.
   */
  authenticated?: boolean;
}

/** Options of `EventStore.fork`. */
export interface ForkOptions {
  /** Name of the new stream; the store picks one when absent. */
  newStream?: string;
}

/** Declares what a backend supports, so the shared conformance suite can adapt without special-casing. */
export interface StoreCapabilities {
  /** Values survive a process restart. */
  persistent: boolean;
  /** `append` with `sync` really reaches stable storage before resolving. */
  durableSync: boolean;
  /** Another process may read streams this process is writing. */
  crossProcessReads: boolean;
  /**
   * `readAll` follows commit order across streams: a record committed after a `readAll` is returned by a later
   * `readAll` after any position the first one returned, however late its transaction commits. Without it, `readAll`
   * walks the streams one by one (creation order, then seq), and a record appended later to a stream the walk already
   * passed is seen only by a walk that starts before it.
   */
  globalOrder: boolean;
  /** Appends accept `fence` (leases with epochs: see the PostgreSQL store). */
  fencing: boolean;
}

/**
 * The event log contract (DESIGN §3). Every backend runs the same conformance suite (tests/stores).
 *
 * - `append` is atomic: every record of the batch is stored or none is. Seqs start at 1 and rise by 1 with no gaps.
 *   When the head differs from `expectedSeq` it rejects with `ConcurrencyConflictError` and writes nothing.
 * - `read` returns records in seq order (or reverse), bounded by `from`/`to` (inclusive) and `limit`; an unknown
 *   stream reads as empty. A record whose checksum fails raises `CorruptRecordError` instead of being returned.
 * - `tail` emits every record from `from` on, history first and then live appends, with no gap and no duplicate.
 * - Every appended record gets a chain field the store computes itself (docs/architecture.md: *The chain*): it commits to the record,
 *   its predecessor's field and, through a MAC (keyed BLAKE3) under the store's chain key, to who wrote it. A caller
 *   cannot pass one; copying records through `append` re-chains them under this store's key. `verifyChain` checks it.
 */
export interface EventStore {
  readonly capabilities: StoreCapabilities;
  readonly blobs: BlobStore;
  append(stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]>;
  read(stream: string, options?: ReadOptions): Promise<RecordEnvelope[]>;
  tail(stream: string, from?: number): Observable<RecordEnvelope>;
  /**
   * Resolves once every tail of `stream` this store serves now has handed its subscriber every record up to `seq` (or
   * has stopped). Tails read asynchronously; a host awaits this before it reads what its subscribers saw.
   */
  delivered?(stream: string, seq: number): Promise<void>;
  /**
   * Records of every stream in the store's global order, each with its position, after `after` (see
   * `StoreCapabilities.globalOrder` for what the order guarantees). Within a stream, seq order. A page shorter than
   * `limit` means nothing more is readable right now. A position that is not one of this store's is
   * `STORE_INVALID_ARGUMENT`.
   */
  readAll(options?: ReadAllOptions): Promise<PositionedRecord[]>;
  head(stream: string): Promise<number>;
  info(stream: string): Promise<StreamInfo | undefined>;
  /** Every stream, oldest first. Fails with the first damaged stream's error: use `streamNames` to list around damage. */
  streams(): Promise<StreamInfo[]>;
  /**
   * The names of every stream, sorted, without opening any: a damaged stream is listed too (its `info` then fails
   * with the damage), so a listing can show the healthy streams and name the damaged ones.
   */
  streamNames?(): Promise<string[]>;
  /**
   * Check `stream`'s chain under this store's key without interpreting any record: every record must follow its
   * predecessor as the chain recorded, the key must have written the chain, and the stream must reach its seal (so a
   * stream cut short is caught). Resolves with what it found (`ChainReport`: the first record that fails and why),
   * never rejects for a broken chain; an unknown stream reports head 0.
   */
  verifyChain(stream: string): Promise<ChainReport>;
  /** Copy records 1..atSeq of `stream` into a new stream (with their chain, sealed anew); the parent is untouched. */
  fork(stream: string, atSeq: number, options?: ForkOptions): Promise<StreamInfo>;
  /**
   * A blob a record of `stream` references: one appended with the stream (`AppendOptions.blobs`, carried by forks),
   * else one in the shared blob store. Verifies the hash: `BLOB_CORRUPT` on a mismatch, `BLOB_NOT_FOUND` when absent.
   */
  readBlob(stream: string, ref: string): Promise<Uint8Array>;
  saveSnapshot(stream: string, snapshot: StoredSnapshot): Promise<void>;
  /** The latest snapshot, or the latest at or before `atOrBefore`. */
  loadSnapshot(stream: string, options?: { atOrBefore?: number }): Promise<StoredSnapshot | undefined>;
  /**
   * Group commit. Resolves once the records of `stream` up to `seq` are as durable as an acknowledged append is in
   * this store's mode (durability `sync`: fsynced; `relaxed`: written), syncing the appends made with `sync: false`
   * meanwhile together, so a writer can start work that may safely be redone (a model call, a read-only tool) before
   * its records are durable and acknowledge them only afterwards. Tails emit only what is committed. Optional: a
   * backend whose every append is durable when it resolves leaves it out (writers then acknowledge at once).
   */
  commit?(stream: string, seq: number): Promise<void>;
  /**
   * Let go of `stream` in this process as soon as no operation uses it (LevelDB: close its database and so its
   * lock), so another process can write it; a later operation reopens it. For streams several processes write in
   * turn (the workspace's memory stream). Optional: a backend without per-stream locks leaves it out.
   */
  release?(stream: string): Promise<void>;
  /**
   * Make this process the writer of `stream` now, before doing anything the stream's records would have to justify
   * (killing a command an in-doubt call left, starting servers): `STORE_LOCKED` when another process holds it, and
   * then nothing is held or changed. Resolves with the function that ends this hold (holds of one stream in one
   * store are counted: the last one's end lets go). LevelDB opens the stream's database in place and keeps it open
   * (its LevelDB lock; never closed to make room while held, and after the hold ends closed like any other); PostgreSQL
   * takes a session advisory lock named after the schema and stream on a connection of its own (until the hold ends,
   * `close`, or that connection is lost). A LevelDB stream that does not exist yet is held once an append creates it.
   * Optional: a store without cross-process writers (in memory) leaves it out.
   */
  hold?(stream: string): Promise<() => Promise<void>>;
  /**
   * One page of streams in creation order (then name), after the `after` stream, optionally only those whose indexed
   * status (`AppendOptions.status`) is `status`: answered from an index, never by reading records. Optional: stores
   * without a status index leave it out (callers then list `streams()` and read each one's tail).
   */
  streamPage?(options?: StreamPageOptions): Promise<StreamInfo[]>;
  /**
   * Where a listing of many streams keeps what it derived from each (a session's summary), with a signature that
   * changes whenever the stream's records do, read without opening the stream. Optional: stores whose streams are
   * cheap to read (memory) or indexed (`streamPage`) leave it out.
   */
  listingCache?(): ListingCache;
  close(): Promise<void>;
}

/** One cached listing entry: the value derived from a stream, and the signature of the stream it was derived at. */
export interface ListingEntry {
  signature: string;
  value: unknown;
}

/** See `EventStore.listingCache`. */
export interface ListingCache {
  /** A signature of the stream's records, cheap (no database opened): equal signatures, equal records. */
  signature(stream: string): Promise<string>;
  load(): Promise<Record<string, ListingEntry>>;
  save(entries: Record<string, ListingEntry>): Promise<void>;
}
