import type { PathChange } from '../../models/workspace.records.js';
import { sameEntry } from './tree-entry.js';
import type { WorkspaceTree } from './workspace-tree.js';

/** Pair renames in a sorted change list: a deleted file and a created one with the same content name each other (`to`, `from`). */
export const pairRenames = (changes: PathChange[]): PathChange[] => {
  const deleted = new Map<string, PathChange[]>();
  for (const change of changes) if (change.before?.type === 'file' && !change.after) deleted.set(change.before.content, [...(deleted.get(change.before.content) ?? []), change]);
  for (const change of changes) {
    if (change.after?.type !== 'file' || change.before) continue;
    const source = deleted.get(change.after.content)?.shift();
    if (!source) continue;
    change.from = source.path;
    source.to = change.path;
  }
  return changes;
};

/** Every path whose entry differs between two trees, sorted by path, renames paired as a capture pairs them. */
export const treeChanges = (from: WorkspaceTree, to: WorkspaceTree): PathChange[] => {
  const changes: PathChange[] = [];
  const paths = new Set<string>();
  for (const [path] of from.list()) paths.add(path);
  for (const [path] of to.list()) paths.add(path);
  for (const path of [...paths].sort()) {
    const before = from.get(path);
    const after = to.get(path);
    if (!sameEntry(before, after)) changes.push({ path, ...(before ? { before } : {}), ...(after ? { after } : {}) });
  }
  return pairRenames(changes);
};

