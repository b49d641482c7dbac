import type { PathChange, TreeEntry } from '../../models/workspace.records.js';
import { blake3Hex } from '../util/blake3.js';
import { nameOf, parentOf } from './tree-entry.js';

export { parentOf, sameEntry } from './tree-entry.js';

/**
 * The workspace tree as rein knows it: workspace-relative `/`-separated paths to entries, with a Merkle digest by
 * directory (git's tree objects, in spirit). A directory's digest is BLAKE3 over its children's lines in name order
 * (`f <mode> <content digest> <name>`, `l <target digest> <name>`, `d <mode> <directory digest> <name>`, each ending
 * in NUL); the tree's digest is the root directory's. Digests are cached per directory and a change clears only its
 * ancestors', so keeping the digest current costs O(depth × siblings) per changed path, not O(tree).
 */
export class WorkspaceTree {
  private readonly entries = new Map<string, TreeEntry>();
  private readonly children = new Map<string, Set<string>>([['', new Set()]]);
  private readonly digests = new Map<string, string>();

  /** A tree holding `entries` (parents before children or not: missing parents are the caller's to add). */
  static of(entries: Iterable<readonly [string, TreeEntry]>): WorkspaceTree {
    const tree = new WorkspaceTree();
    for (const [path, entry] of entries) tree.set(path, entry);
    return tree;
  }

  get size(): number {
    return this.entries.size;
  }

  get(path: string): TreeEntry | undefined {
    return this.entries.get(path);
  }

  has(path: string): boolean {
    return this.entries.has(path);
  }

  /** The names directly inside directory `path` (`''`: the root). */
  childrenOf(path: string): ReadonlySet<string> {
    return this.children.get(path) ?? new Set();
  }

  set(path: string, entry: TreeEntry): void {
    const previous = this.entries.get(path);
    if (previous?.type === 'dir' && entry.type !== 'dir') this.removeChildren(path);
    this.entries.set(path, entry);
    const parent = parentOf(path);
    let siblings = this.children.get(parent);
    if (!siblings) this.children.set(parent, (siblings = new Set()));
    siblings.add(nameOf(path));
    if (entry.type === 'dir' && !this.children.has(path)) this.children.set(path, new Set());
    this.invalidate(entry.type === 'dir' ? path : parent);
  }

  /** Remove `path` and, for a directory, everything under it; returns what was removed, deepest first. */
  delete(path: string): Array<[string, TreeEntry]> {
    const entry = this.entries.get(path);
    if (!entry) return [];
    const removed = entry.type === 'dir' ? this.removeChildren(path) : [];
    this.entries.delete(path);
    this.children.get(parentOf(path))?.delete(nameOf(path));
    this.children.delete(path);
    this.digests.delete(path);
    this.invalidate(parentOf(path));
    removed.push([path, entry]);
    return removed;
  }

  /** Every entry, sorted by path. */
  list(): Array<[string, TreeEntry]> {
    return [...this.entries].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  }

  /** The entries under directory `path` (not itself). */
  under(path: string): Array<[string, TreeEntry]> {
    const found: Array<[string, TreeEntry]> = [];
    const walk = (directory: string) => {
      for (const name of this.children.get(directory) ?? []) {
        const child = directory === '' ? name : `${directory}/${name}`;
        const entry = this.entries.get(child);
        if (!entry) continue;
        found.push([child, entry]);
        if (entry.type === 'dir') walk(child);
      }
    };
    walk(path);
    return found;
  }

  clone(): WorkspaceTree {
    return WorkspaceTree.of(this.entries);
  }

  /** Apply recorded changes in order (each path takes its `after`, or goes). */
  apply(changes: readonly PathChange[]): void {
    for (const change of changes) {
      if (change.after) this.set(change.path, change.after);
      else this.delete(change.path);
    }
  }

  /** The tree's digest (the root directory's). */
  digest(): string {
    return this.directoryDigest('');
  }

  private directoryDigest(path: string): string {
    const cached = this.digests.get(path);
    if (cached !== undefined) return cached;
    const names = [...(this.children.get(path) ?? [])].sort();
    let text = '';
    for (const name of names) {
      const child = path === '' ? name : `${path}/${name}`;
      const entry = this.entries.get(child);
      if (!entry) continue;
      if (entry.type === 'file') text += `f ${entry.mode.toString(8)} ${entry.content.slice(-64)} ${name}\0`;
      else if (entry.type === 'symlink') text += `l ${blake3Hex(entry.target)} ${name}\0`;
      else text += `d ${entry.mode.toString(8)} ${this.directoryDigest(child)} ${name}\0`;
    }
    const digest = blake3Hex(text);
    this.digests.set(path, digest);
    return digest;
  }

  private invalidate(path: string): void {
    let current: string | undefined = path;
    while (current !== undefined) {
      this.digests.delete(current);
      current = current === '' ? undefined : parentOf(current);
    }
  }

  private removeChildren(path: string): Array<[string, TreeEntry]> {
    const removed: Array<[string, TreeEntry]> = [];
    for (const name of [...(this.children.get(path) ?? [])]) removed.push(...this.delete(path === '' ? name : `${path}/${name}`));
    return removed;
  }
}
