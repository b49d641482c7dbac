import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { IHasher } from 'hash-wasm';
import type { PathChange, TreeEntry } from '../../models/workspace.records.js';
import type { CaptureFilter } from './capture-rules.js';
import { metaOf, racyMeta, readEntry, sameMeta, type EntryMeta } from './file-entry.js';
import type { WorkspaceTree } from './workspace-tree.js';
import { parentOf, sameEntry } from './tree-entry.js';
import { pairRenames } from './tree-changes.js';

/** The changes found by one pass, per path: the entry it had first and has now, and the bytes of a new file content. */
export class ChangeAccumulator {
  readonly paths = new Map<string, { before: TreeEntry | undefined; after: TreeEntry | undefined; bytes?: Uint8Array }>();

  /** `keepBytes: false` (a baseline, which stores bytes as it reads them): only the entries are kept. */
  constructor(private readonly keepBytes = true) {}

  note(path: string, before: TreeEntry | undefined, after: TreeEntry | undefined, bytes?: Uint8Array): void {
    const kept = this.keepBytes ? bytes : undefined;
    const known = this.paths.get(path);
    if (known) {
      known.after = after;
      if (kept) known.bytes = kept;
      else delete known.bytes;
    } else this.paths.set(path, { before, after, ...(kept ? { bytes: kept } : {}) });
  }

  /**
   * The net changes, sorted by path (a directory before what it holds), with renames paired: a deleted file and a
   * created one with the same content and mode are each other's `to` and `from`.
   */
  changes(): PathChange[] {
    const changes: PathChange[] = [];
    for (const [path, { before, after }] of this.paths) if (!sameEntry(before, after)) changes.push({ path, ...(before ? { before } : {}), ...(after ? { after } : {}) });
    changes.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
    return pairRenames(changes);
  }
}

/** Where a tree reader keeps what it learns: the tree, each entry's last `lstat`, and the directories to watch. */
export interface TreeReaderState {
  root: string;
  tree: WorkspaceTree;
  metas: Map<string, EntryMeta>;
  filter: CaptureFilter;
  hasher: IHasher;
  /** Called for every directory the tree holds after a pass looked at it (a watcher adds it). */
  watch?: (path: string) => void;
  /** Called for every directory that left the tree. */
  unwatch?: (path: string) => void;
  /** Called once per file read whose bytes were kept (the baseline stores them as it goes). */
  onBytes?: (entry: TreeEntry, bytes: Uint8Array) => void | Promise<void>;
}

const missing = (error: unknown): boolean => {
  const code = (error as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * Bring `state.tree` in line with the disk for `path` (workspace-relative): read its entry (a file only when its
 * `lstat` changed), note each difference in `changes`, and for a directory that is new to the tree read everything
 * under it; with `descend`, read every known directory's content too (a full scan), otherwise only the paths asked
 * about (the watcher names them). Paths the capture leaves out, and anything inside a directory the tree does not
 * hold, are skipped.
 */
export const readPath = async (state: TreeReaderState, path: string, changes: ChangeAccumulator, descend: boolean): Promise<void> => {
  const parent = parentOf(path);
  if (parent !== '' && state.tree.get(parent)?.type !== 'dir') return;
  const absolute = join(state.root, path);
  let stat: Stats | undefined;
  const readAt = Date.now();
  try {
    stat = lstatSync(absolute);
  } catch (error) {
    if (!missing(error)) throw error;
  }
  const current = state.tree.get(path);
  const kept = stat !== undefined && (stat.isFile() || stat.isDirectory() || stat.isSymbolicLink()) && !state.filter.excluded(path, stat.isDirectory());
  if (!stat || !kept) {
    if (current) remove(state, path, changes);
    return;
  }
  if (stat.isDirectory()) {
    const entry: TreeEntry = { type: 'dir', mode: stat.mode & 0o7777 };
    const fresh = current?.type !== 'dir';
    if (fresh && current) remove(state, path, changes);
    if (!sameEntry(current, entry)) {
      state.tree.set(path, entry);
      changes.note(path, fresh ? undefined : current, entry);
    }
    state.watch?.(path);
    if (fresh || descend) await readDirectory(state, path, changes, descend);
    return;
  }
  const meta = metaOf(stat);
  if (current && current.type !== 'dir' && sameMeta(state.metas.get(path), meta)) return;
  let read;
  try {
    read = readEntry(absolute, stat, state.filter.rules.maxFileBytes, state.hasher);
  } catch (error) {
    // A file rein may not read (mode 000 as a user) keeps the entry it had; a new one is not captured.
    if ((error as { code?: string }).code === 'EACCES') return;
    throw error;
  }
  if (!read) {
    if (current) remove(state, path, changes);
    return;
  }
  if (current?.type === 'dir') remove(state, path, changes);
  const before = current?.type === 'dir' ? undefined : current;
  if (!sameEntry(before, read.entry)) {
    state.tree.set(path, read.entry);
    changes.note(path, before, read.entry, read.bytes);
    if (read.bytes && state.onBytes) await state.onBytes(read.entry, read.bytes);
  }
  // A file changed just before it was read is read again next time: a rewrite of the same size in the same
  // timestamp tick would leave its lstat as it is.
  if (racyMeta(meta, readAt)) state.metas.delete(path);
  else state.metas.set(path, meta);
};

/** Read every entry of directory `path` (`''`: the root), and drop from the tree what is no longer there. */
export const readDirectory = async (state: TreeReaderState, path: string, changes: ChangeAccumulator, descend: boolean): Promise<void> => {
  let names: string[];
  try {
    names = readdirSync(path === '' ? state.root : join(state.root, path));
  } catch (error) {
    // Gone (its parent's pass drops it), or a folder rein may not list (as a user, mode 000): left as the tree knows it.
    if (missing(error) || (error as { code?: string }).code === 'EACCES') return;
    throw error;
  }
  const present = new Set(names);
  for (const name of names) await readPath(state, path === '' ? name : `${path}/${name}`, changes, descend);
  for (const name of [...state.tree.childrenOf(path)]) if (!present.has(name)) remove(state, path === '' ? name : `${path}/${name}`, changes);
};

const remove = (state: TreeReaderState, path: string, changes: ChangeAccumulator): void => {
  for (const [removed, entry] of state.tree.delete(path)) {
    changes.note(removed, entry, undefined);
    state.metas.delete(removed);
    if (entry.type === 'dir') state.unwatch?.(removed);
  }
};
