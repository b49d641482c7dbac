import type { PathChange, TreeEntry } from '../../models/workspace.records.js';

/** How a path changed: created, modified (content or link target), deleted, renamed (from `from`), its mode, or its type. */
export type ChangeKind = 'created' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'type';

/** One path's change as a reader sees it (a rename once, under its new path). */
export interface FileChange {
  path: string;
  kind: ChangeKind;
  /** For `renamed`: the old path. */
  from?: string;
  before?: TreeEntry;
  after?: TreeEntry;
}

const kindOf = (before: TreeEntry | undefined, after: TreeEntry | undefined, from: string | undefined): ChangeKind => {
  if (!before) return from !== undefined ? 'renamed' : 'created';
  if (!after) return 'deleted';
  if (before.type !== after.type) return 'type';
  if (before.type === 'file' && after.type === 'file' && before.content === after.content) return 'mode';
  if (before.type === 'dir') return 'mode';
  return 'modified';
};

/** Recorded changes as a reader sees them: the deleting half of a rename is folded into its new path's `renamed`. */
export const fileChangesOf = (changes: readonly PathChange[]): FileChange[] =>
  changes
    .filter((change) => change.to === undefined || change.after !== undefined)
    .map((change) => ({
      path: change.path,
      kind: kindOf(change.before, change.after, change.from),
      ...(change.from !== undefined ? { from: change.from } : {}),
      ...(change.before ? { before: change.before } : {}),
      ...(change.after ? { after: change.after } : {}),
    }));

const marks: Record<ChangeKind, string> = { created: '+', modified: '~', deleted: '-', renamed: '→', mode: '~', type: '~' };

/** A path as shown: a directory with its trailing `/`. */
export const shownPath = (path: string, entry: TreeEntry | undefined): string => (entry?.type === 'dir' ? `${path}/` : path);

/** One change in a few characters: `+ b.txt`, `- old.txt`, `~ a.txt (mode 644 → 600)`, `→ new.txt (from old.txt)`. */
export const changeText = (change: FileChange): string => {
  const path = shownPath(change.path, change.after ?? change.before);
  const mode = (entry: TreeEntry | undefined) => (entry && entry.type !== 'symlink' ? entry.mode.toString(8) : '');
  const detail =
    change.kind === 'renamed' ? ` (from ${change.from})` : change.kind === 'mode' ? ` (mode ${mode(change.before)} → ${mode(change.after)})` : change.kind === 'type' ? ` (${change.before?.type} → ${change.after?.type})` : change.after?.type === 'symlink' ? ` → ${change.after.target}` : '';
  return `${marks[change.kind]} ${path}${detail}`;
};

/** Changes as one line, at most `limit` of them named (`…and 12 more`). */
export const changesLine = (changes: readonly FileChange[], limit = 12): string => {
  const named = changes.slice(0, limit).map(changeText).join(', ');
  return changes.length > limit ? `${named}, …and ${changes.length - limit} more` : named;
};
