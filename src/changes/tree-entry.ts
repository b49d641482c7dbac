import type { TreeEntry } from '../../models/workspace.records.js';

/** The parent of a workspace-relative path (`''` for a top-level entry). */
export const parentOf = (path: string): string => {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
};

/** The last part of a workspace-relative path. */
export const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * True when two entries describe the same thing (type, mode, content and size, or target). Size counts on its own: a
 * file over the size cap is recorded by its size and digest, and the tree's digest covers the size.
 */
export const sameEntry = (left: TreeEntry | undefined, right: TreeEntry | undefined): boolean => {
  if (left === undefined || right === undefined) return left === right;
  if (left.type !== right.type) return false;
  if (left.type === 'file' && right.type === 'file') return left.content === right.content && left.size === right.size && left.mode === right.mode;
  if (left.type === 'dir' && right.type === 'dir') return left.mode === right.mode;
  return left.type === 'symlink' && right.type === 'symlink' && left.target === right.target;
};

