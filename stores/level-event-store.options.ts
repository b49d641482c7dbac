/*
 * The options of the LevelDB event store (`openLevelEventStore`): durability and group commit, the pool of open
 * stream databases, read-only reads through copies, tails that follow other processes, and the chain key. Split from
 * level-event-store.ts (issue 31).
 */
import type { ChainKey } from './chain-crypto.js';

/** Options of `openLevelEventStore`. */
export interface LevelEventStoreOptions {
  /**
   * `'sync'` (default): every append is fsynced before it resolves; an acknowledged append survives a power loss. An
   * append with `sync: false` is only written, and `commit` makes it durable together with the others written
   * meanwhile (one fsync per group; tails wait for it).
   * `'relaxed'`: appends are handed to the OS without fsync and an fsync of each stream's log every
   * `groupCommitIntervalMs` (and on `flush` / `close`) makes them durable. A process crash loses nothing; an OS crash
   * or power loss can lose the appends acknowledged in the last interval, always as a suffix of the stream (should a
   * loss ever leave a hole, reads report `STORE_CORRUPT_RECORD` rather than skip it). `append(..., { sync: true })`
   * still fsyncs that batch. Blobs are fsynced in both modes, so a durable record never points at a lost blob.
   */
  durability?: 'sync' | 'relaxed';
  /** Group-commit period of the relaxed mode, in ms (default 50). */
  groupCommitIntervalMs?: number;
  /**
   * Sync mode: how long `commit` gathers further `sync: false` appends of a stream before the one fsync that makes
   * them durable, in ms (default 4). 0 syncs as soon as the current event-loop turn ends. One such fsync runs at a
   * time per stream, beside the appends (which it does not hold up); commits asked for while it runs share the next
   * one, arranged this long after it ends.
   */
  commitDelayMs?: number;
  /** Told the stream and its new durable head after every fsync of a stream database (tests count them). */
  onSync?: (stream: string, durableHead: number) => void;
  /** How many stream databases stay open before idle ones are closed (default 64; each may hold ~2 MiB of write buffer and cache). */
  maxOpenStreams?: number;
  /** Wall clock for `createdAt` (epoch ms); defaults to `Date.now`. */
  clock?: () => number;
  /**
   * Never open a database in place: every read goes through a temporary copy (as for a stream another process
   * holds; one per stream, made on its first read and kept until `close`, so the store reads each stream as it was
   * then) and every write raises `STORE_READ_ONLY`, so the store directory is byte-identical afterwards, a damaged
   * stream included (LevelDB's recovery drops damaged data only in the copy). For the reading commands (`rein
   * sessions`, `show`, `replay`, `trace`, `context`, `inspect`, the `rein memory` listings).
   */
  readOnly?: boolean;
  /**
   * Read-only mode: replace a stream's temporary copy whenever the stream was written since the copy was made (a
   * directory listing per read), so a long-lived reader sees what other processes append (`rein serve --read-only`).
   */
  freshReads?: boolean;
  /** Read-only mode: how many streams' copies stay open for the next reads (default 16). */
  readCopies?: number;
  /**
   * How often a tail checks its stream's files for appends made by other processes or other store objects, in ms
   * (default 200; a file-system notification wakes it sooner where there is one).
   */
  followIntervalMs?: number;
  /**
   * The key that authenticates the chain of every appended record (docs/architecture.md: *The chain*). Default: this machine's key
   * (`loadChainKey`: `$REIN_CHAIN_KEY_FILE`, else `chain.key` in rein's configuration folder), created by the first
   * append; a read-only store never creates it.
   */
  chainKey?: ChainKey;
}
