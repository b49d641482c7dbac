import type { IHasher } from 'hash-wasm';
import type { FactDraft } from '../../models/envelope.js';
import type { ChangeSource, PathChange, TreeEntry, WorkspaceCaptured, WorkspaceChanged } from '../../models/workspace.records.js';
import type { BlobStore } from '../../stores/blob-store.js';
import { createBlake3, loadBlake3 } from '../util/blake3.js';
import type { CaptureFilter } from './capture-rules.js';
import { ChangeWatcher } from './change-watcher.js';
import type { EntryMeta } from './file-entry.js';
import { manifestBytes } from './tree-manifest.js';
import { ChangeAccumulator, readDirectory, readPath, type TreeReaderState } from './tree-reader.js';
import { WorkspaceTree } from './workspace-tree.js';

/** The changes of one pass: each path's entries, the tree's digest after them, and the new bytes to store with them. */
export interface ChangeSet {
  changes: PathChange[];
  tree: string;
  /** New file contents, written into the session's stream in the same batch as the record naming them. */
  blobs: Uint8Array[];
}

/** The tree the session's log holds (when it captured before), and the calls an earlier run left in doubt. */
export interface KnownTree {
  tree: WorkspaceTree;
  inDoubt: readonly string[];
  /** The paths the session's capture left out when it began (still left out). */
  never: readonly string[];
}

export interface WorkspaceCaptureOptions {
  root: string;
  filter: CaptureFilter;
  /** The store's shared blobs: a baseline's bytes go there (once per store), without an fsync each. */
  blobs: BlobStore;
  /** The tree the log holds, read when the capture starts (undefined: the session never captured). */
  known: () => Promise<KnownTree | undefined>;
  /** `scan`: find changes by a scan of the tree's metadata, never through inotify (`auto`: inotify where it works). */
  detector?: 'auto' | 'scan';
  /** With inotify, a tree of at most this many entries is scanned instead (default 1,000; 0: never). */
  scanBelow?: number;
}

/**
 * Below this many entries a scan (an `lstat` each, synchronous) costs less than waiting for inotify's round trip
 * through the event loop, which a busy machine stretches; the watches are kept for when the tree grows.
 */
const defaultScanBelow = 1_000;

/** Who a call's changes are attributed to. */
export interface CallAttribution {
  effectId: string;
  callId: string;
  tool: string;
}

/** What a window produced: its function's outcome, and the facts (with the blobs they name) to record with it. */
export interface WindowResult<T> {
  outcome: { ok: true; value: T } | { ok: false; error: unknown };
  facts: FactDraft[];
  blobs: Uint8Array[];
}

/** Change sets above this many new bytes put the rest into the shared blob store instead of the batch. */
const maxBatchBlobBytes = 8 * 1024 * 1024;
/** A baseline waits for its stored bytes once this many are pending. */
const maxPendingBaselineBytes = 32 * 1024 * 1024;

const queues = new Map<string, Promise<void>>();

/** Run `work` alone among the captures of workspace `key` in this process (a window's changes are its call's). */
const exclusive = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
  queues.set(key, mine);
  await previous;
  try {
    return await work();
  } finally {
    release();
    if (queues.get(key) === mine) queues.delete(key);
  }
};

const depthFirst = (left: string, right: string): number => {
  const depth = (path: string) => path.split('/').length;
  return depth(left) - depth(right) || (left < right ? -1 : left > right ? 1 : 0);
};

/** A `workspace.changed` fact. */
export const changedFact = (source: ChangeSource, set: Pick<ChangeSet, 'changes' | 'tree'>, extra: Partial<Omit<WorkspaceChanged, 'source' | 'changes' | 'tree'>> = {}): FactDraft => ({
  type: 'workspace.changed',
  data: { source, ...extra, changes: set.changes, tree: set.tree } satisfies WorkspaceChanged,
});

/**
 * The workspace's side of a session's steps. A **window** runs one call that may change files: it first brings the
 * tree up to date (the first window of a process captures the whole workspace: a baseline, or the changes since the
 * tree the log holds, recorded as made outside rein), runs the call, then reads what changed during it. Between
 * windows, an inotify watch per directory notes which paths changed, so a window reads only those (an `lstat` each,
 * a read and a BLAKE3 only for what changed): its cost does not grow with the workspace. Where inotify is missing,
 * or events were lost, a scan compares every entry's `lstat` with the one it was read at (no file is read again
 * unless it changed). Windows of the captures of one workspace in a process run one at a time.
 */
export class WorkspaceCapture {
  private readonly tree = new WorkspaceTree();
  private state: TreeReaderState | undefined;
  private watcher: ChangeWatcher | undefined;
  private watchFailed = false;
  /** Content refs known to be stored (in the shared store or the session's stream). */
  private readonly stored = new Set<string>();
  private started = false;
  private closed = false;

  constructor(private readonly options: WorkspaceCaptureOptions) {}

  /**
   * Run `work` as a call that may change the workspace. What changed before it (the baseline of the first window, or
   * changes made since the last one) is handed to `recordBefore` first, to be recorded before the call starts; what
   * changed while it ran comes back as facts to record with its settlement.
   */
  window<T>(call: CallAttribution, work: () => Promise<T>, recordBefore: (facts: FactDraft[], blobs: Uint8Array[]) => Promise<void>): Promise<WindowResult<T>> {
    return exclusive(this.options.root, async () => {
      if (!this.closed) {
        const found = await this.catchUp();
        if (found.facts.length > 0) await recordBefore(found.facts, found.blobs);
      }
      let outcome: WindowResult<T>['outcome'];
      try {
        outcome = { ok: true, value: await work() };
      } catch (error) {
        outcome = { ok: false, error };
      }
      const during = this.closed ? undefined : await this.pass();
      return { outcome, facts: during ? [changedFact('call', during, call)] : [], blobs: during?.blobs ?? [] };
    });
  }

  /** What changed since the last window (a background command, a session hook): facts to record now, if any. */
  flush(): Promise<{ facts: FactDraft[]; blobs: Uint8Array[] }> {
    return exclusive(this.options.root, async () => (this.started && !this.closed ? this.catchUp() : { facts: [], blobs: [] }));
  }

  /** The tree as the capture knows it now (for tests and benchmarks). */
  get digest(): string {
    return this.tree.digest();
  }

  /** How changes are found: `inotify` or `scan`. */
  get detector(): 'inotify' | 'scan' {
    return this.watcher ? 'inotify' : 'scan';
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
  }

  private async catchUp(): Promise<{ facts: FactDraft[]; blobs: Uint8Array[] }> {
    if (this.started) {
      const between = await this.pass();
      return between ? { facts: [changedFact('between', between)], blobs: between.blobs } : { facts: [], blobs: [] };
    }
    this.started = true;
    return this.start();
  }

  private async start(): Promise<{ facts: FactDraft[]; blobs: Uint8Array[] }> {
    await loadBlake3();
    const hasher: IHasher = await createBlake3();
    const known = await this.options.known();
    if (known) {
      this.options.filter.neverAlso(known.never);
      for (const [path, entry] of known.tree.list()) {
        this.tree.set(path, entry);
        if (entry.type === 'file' && !entry.unrestorable) this.stored.add(entry.content);
      }
    }
    if (this.options.detector !== 'scan' && ChangeWatcher.available()) {
      this.watcher = new ChangeWatcher(this.options.root);
      if (!this.watcher.add('')) this.dropWatcher();
    }
    const pending: Array<Promise<unknown>> = [];
    let pendingBytes = 0;
    const metas = new Map<string, EntryMeta>();
    this.state = {
      root: this.options.root,
      tree: this.tree,
      metas,
      filter: this.options.filter,
      hasher,
      watch: (path) => {
        if (this.watcher && !this.watcher.add(path)) this.watchFailed = true;
      },
      unwatch: (path) => this.watcher?.remove(path),
    };
    if (known) {
      const outside = await this.pass(true);
      if (!outside) return { facts: [], blobs: [] };
      return { facts: [changedFact('outside', outside, known.inDoubt.length > 0 ? { inDoubt: [...known.inDoubt] } : {})], blobs: outside.blobs };
    }
    // The baseline: every file's bytes go to the shared store as they are read (each content once per store).
    const baseline = new ChangeAccumulator(false);
    this.state.onBytes = async (entry, bytes) => {
      if (entry.type !== 'file' || this.stored.has(entry.content)) return;
      this.stored.add(entry.content);
      pending.push(this.options.blobs.put(bytes, { durable: false }));
      pendingBytes += bytes.length;
      if (pendingBytes >= maxPendingBaselineBytes) {
        await Promise.all(pending.splice(0));
        pendingBytes = 0;
      }
    };
    await readDirectory(this.state, '', baseline, true);
    delete this.state.onBytes;
    await Promise.all(pending);
    this.afterPass();
    const list = this.tree.list();
    const manifest = await this.options.blobs.put(manifestBytes(list));
    const count = (type: TreeEntry['type']) => list.filter(([, entry]) => entry.type === type).length;
    const captured: WorkspaceCaptured = {
      tree: this.tree.digest(),
      manifest,
      files: count('file'),
      dirs: count('dir'),
      symlinks: count('symlink'),
      bytes: list.reduce((sum, [, entry]) => sum + (entry.type === 'file' ? entry.size : 0), 0),
      unrestorable: list.filter(([, entry]) => entry.type === 'file' && entry.unrestorable).length,
      rules: this.options.filter.rules,
      detector: this.detector,
    };
    return { facts: [{ type: 'workspace.captured', data: captured }], blobs: [] };
  }

  /** Bring the tree up to date: the paths the watcher noted, or (`full`, no watcher, lost events, a small tree) every path. */
  private async pass(full = false): Promise<ChangeSet | undefined> {
    const state = this.state!;
    const changes = new ChangeAccumulator();
    const small = this.tree.size <= (this.options.scanBelow ?? defaultScanBelow);
    const drained = this.watcher && !small ? await this.watcher.drain() : (this.watcher?.reset(), undefined);
    if (full || !drained || drained.lost) await readDirectory(state, '', changes, true);
    else for (const path of [...drained.paths].sort(depthFirst)) await readPath(state, path, changes, false);
    this.afterPass();
    const list = changes.changes();
    if (list.length === 0) return undefined;
    const blobs: Uint8Array[] = [];
    const shared: Array<Promise<unknown>> = [];
    let batchBytes = 0;
    for (const { after, bytes } of changes.paths.values()) {
      if (after?.type !== 'file' || after.unrestorable || !bytes || this.stored.has(after.content)) continue;
      this.stored.add(after.content);
      if (batchBytes + bytes.length <= maxBatchBlobBytes) {
        blobs.push(bytes);
        batchBytes += bytes.length;
      } else shared.push(this.options.blobs.put(bytes));
    }
    await Promise.all(shared);
    return { changes: list, tree: this.tree.digest(), blobs };
  }

  /** A watch that could not be added (the user's inotify limit): from now on every pass scans. */
  private afterPass(): void {
    if (this.watchFailed) this.dropWatcher();
  }

  private dropWatcher(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}
