import { constants, lstatSync, readdirSync, readFileSync, readlinkSync, type BigIntStats } from 'node:fs';
import { mkdir, open, symlink } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { isInside } from '../policy/protected-paths.js';
import { removeEntry } from './protected-watch.js';
import type { Workspace } from './workspace.js';

/** `lstat` without following a link; undefined when nothing is there. Synchronous: a sweep is a few dozen small stats, and a hop to the thread pool per stat costs more than the stat. */
const statOf = (path: string): BigIntStats | undefined => {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return undefined;
  }
};
const entriesOf = (path: string): string[] => {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
};

/*
 * A copy of the protected paths inside the workspace, taken before a program that runs outside the sandbox (an MCP
 * server on the host) acts, and put back afterwards: the bash sandbox keeps a command from changing them, nothing
 * keeps a host process from it. Files and links are copied whole; folders entry by entry. The event store is left
 * out (rein writes it meanwhile, and its chain shows any change), and so is anything past the limits below — such a
 * path is only checked for appearing (`absentProtectedPaths`).
 */

/** Largest file copied, most entries and most bytes per snapshot. */
const maxFileBytes = 1024 * 1024;
const maxEntries = 2_000;
const maxTotalBytes = 16 * 1024 * 1024;

/** A file as it was: its bytes, its mode, and its stamp (inode, size, change times: a change to it changes `ctime`, which no program can set). */
type Entry = { kind: 'file'; content: Buffer; mode: number; stamp: string } | { kind: 'dir'; mode: number } | { kind: 'link'; target: string };

const stampOf = (info: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint; nlink: bigint }): string => `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.nlink}`;

/** The bytes of files read by earlier snapshots, by path and stamp: a file unchanged since is not read again. */
const contents = new Map<string, { stamp: string; content: Buffer }>();

/** The protected entries as they were: workspace path → entry, for the roots that fit the limits. */
export interface ProtectedSnapshot {
  roots: string[];
  entries: Map<string, Entry>;
}

const storeNames = new Set(['.rein']);

/** Read one root into `entries`; false when it does not fit (what was read of it is dropped by the caller). */
const readRoot = (path: string, entries: Map<string, Entry>, budget: { entries: number; bytes: number }): boolean => {
  const info = statOf(path);
  if (info === undefined) return true;
  if (--budget.entries < 0) return false;
  const mode = Number(info.mode & 0o7777n);
  if (info.isSymbolicLink()) entries.set(path, { kind: 'link', target: readlinkSync(path) });
  else if (info.isFile()) {
    const size = Number(info.size);
    if (size > maxFileBytes || (budget.bytes -= size) < 0) return false;
    const stamp = stampOf(info);
    let known = contents.get(path);
    if (known?.stamp !== stamp) {
      known = { stamp, content: readFileSync(path) };
      // Read between two stats: a file that changed meanwhile is read again next time.
      if (contents.size > maxEntries * 4) contents.clear();
      contents.set(path, known);
    }
    entries.set(path, { kind: 'file', content: known.content, mode, stamp });
  } else if (info.isDirectory()) {
    entries.set(path, { kind: 'dir', mode });
    for (const name of entriesOf(path)) if (!readRoot(join(path, name), entries, budget)) return false;
  } else return false;
  return true;
};

/** Copy every protected path inside the workspace (see the file comment). */
export const snapshotProtected = (workspace: Workspace): ProtectedSnapshot => {
  const roots = workspace.protectedList().filter((path) => path !== workspace.root && isInside(workspace.root, path) && !storeNames.has(basename(path)));
  const entries = new Map<string, Entry>();
  const kept: string[] = [];
  const budget = { entries: maxEntries, bytes: maxTotalBytes };
  for (const root of roots) {
    const own = new Map<string, Entry>();
    const before = { ...budget };
    if (!readRoot(root, own, budget)) {
      Object.assign(budget, before);
      continue;
    }
    for (const [path, entry] of own) entries.set(path, entry);
    kept.push(root);
  }
  return { roots: kept, entries };
};

/** Every entry under `path` now (deepest last), without following links. */
const listNow = (path: string, out: string[] = []): string[] => {
  const info = statOf(path);
  if (info === undefined || out.length > maxEntries * 2) return out;
  out.push(path);
  if (info.isDirectory() && !info.isSymbolicLink()) for (const name of entriesOf(path)) listNow(join(path, name), out);
  return out;
};

/** Whether every folder from the workspace root down to `path`'s parent is a real folder (no link put on the way). */
const realParents = (root: string, path: string): boolean => {
  let at = root;
  for (const component of relative(root, dirname(path)).split(sep).filter(Boolean)) {
    at = join(at, component);
    const info = statOf(at);
    if (info === undefined || info.isSymbolicLink() || !info.isDirectory()) return false;
  }
  return true;
};

const sameEntry = (path: string, entry: Entry): boolean => {
  const info = statOf(path);
  if (info === undefined) return false;
  if (entry.kind === 'link') return info.isSymbolicLink() && readlinkSync(path) === entry.target;
  if (entry.kind === 'dir') return info.isDirectory() && !info.isSymbolicLink();
  if (!info.isFile()) return false;
  // Unchanged by its stamp; changed in stamp only (touched, written back as it was): unchanged in content and mode.
  if (stampOf(info) === entry.stamp) return true;
  return info.nlink === 1n && Number(info.mode & 0o7777n) === entry.mode && Number(info.size) === entry.content.length && readFileSync(path).equals(entry.content);
};

/** Write a file back without following a link at its place (one put there is removed first). */
const writeBack = async (path: string, entry: Extract<Entry, { kind: 'file' }>): Promise<void> => {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, entry.mode);
  try {
    await handle.writeFile(entry.content);
    await handle.chmod(entry.mode);
  } finally {
    await handle.close();
  }
};

/**
 * Put the protected paths back as `snapshot` holds them: an entry added under a copied root is removed, one changed or
 * removed is restored. Nothing is followed through a link a program put in place of a folder: that link is removed.
 * Returns the workspace paths that were removed and those restored (each once, parents before children).
 */
export const restoreProtected = async (workspace: Workspace, snapshot: ProtectedSnapshot): Promise<{ removed: string[]; restored: string[] }> => {
  const removed: string[] = [];
  const restored: string[] = [];
  const root = workspace.root;
  for (const top of snapshot.roots) {
    // What is there now that was not: removed, deepest first, never through a link.
    const now = listNow(top);
    for (const path of now.reverse()) {
      if (snapshot.entries.has(path) || !realParents(root, path)) continue;
      if (await removeEntry(dirname(path), basename(path))) removed.push(workspace.display(path));
    }
    // What was there and is not now (or differs): put back, parents first.
    const paths = [...snapshot.entries.keys()].filter((path) => path === top || isInside(top, path)).sort((a, b) => a.length - b.length);
    for (const path of paths) {
      const entry = snapshot.entries.get(path)!;
      if (sameEntry(path, entry)) continue;
      if (!realParents(root, path)) {
        // A link (or a file) took a folder's place on the way: remove it, then the folders are made again.
        let at = root;
        for (const component of relative(root, dirname(path)).split(sep).filter(Boolean)) {
          at = join(at, component);
          const info = statOf(at);
          if (info !== undefined && (info.isSymbolicLink() || !info.isDirectory())) await removeEntry(dirname(at), basename(at));
          await mkdir(at).catch(() => undefined);
        }
      }
      const info = statOf(path);
      if (info !== undefined && (entry.kind !== 'file' || !info.isFile() || info.nlink > 1n)) await removeEntry(dirname(path), basename(path));
      if (entry.kind === 'dir') await mkdir(path, { mode: entry.mode }).catch(() => undefined);
      else if (entry.kind === 'link') await symlink(entry.target, path).catch(() => undefined);
      else await writeBack(path, entry).catch(() => undefined);
      if (sameEntry(path, entry)) restored.push(workspace.display(path));
    }
  }
  return { removed: [...new Set(removed)], restored: [...new Set(restored)] };
};
