/*
 * The paths a patch in OpenAI's `apply_patch` format names, read from its header lines alone. Zod-free and cheap:
 * the context view, the trace, `rein show` and ACP take a patch call's files from here, since the call has no `path`.
 */

/** One file a patch names: what it does to it, and where an update moves it. */
export interface PatchTarget {
  kind: 'add' | 'delete' | 'update';
  path: string;
  moveTo?: string;
}

const headers: ReadonlyArray<[PatchTarget['kind'], string]> = [
  ['add', '*** Add File: '],
  ['delete', '*** Delete File: '],
  ['update', '*** Update File: '],
];
const moveHeader = '*** Move to: ';

/** The files a patch text names, in order (header lines only; a malformed patch names what its headers say). */
export const patchTargets = (text: unknown): PatchTarget[] => {
  if (typeof text !== 'string') return [];
  const targets: PatchTarget[] = [];
  // A patch shown with its control characters escaped (`rein show` escapes what a model wrote) has `\n` for its line ends.
  const lines = text.includes('\n') ? text.split('\n') : text.split('\\n');
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '').trimEnd();
    if (!line.startsWith('*** ')) continue;
    const header = headers.find(([, prefix]) => line.startsWith(prefix));
    if (header) {
      const path = line.slice(header[1].length).trim();
      if (path !== '') targets.push({ kind: header[0], path });
      continue;
    }
    const last = targets[targets.length - 1];
    if (line.startsWith(moveHeader) && last?.kind === 'update' && last.moveTo === undefined) {
      const moveTo = line.slice(moveHeader.length).trim();
      if (moveTo !== '') last.moveTo = moveTo;
    }
  }
  return targets;
};

/** Every path a patch changes: each target, and each update's destination. */
export const patchPaths = (text: unknown): string[] => [...new Set(patchTargets(text).flatMap((target) => (target.moveTo === undefined ? [target.path] : [target.path, target.moveTo])))];

/** A patch in a few words for a one-line summary: `patch a.ts, b.ts (+1 more)`. */
export const patchSummary = (text: unknown): string => {
  const paths = patchPaths(text);
  if (paths.length === 0) return 'patch';
  const shown = paths.slice(0, 2).join(', ');
  return `patch ${shown}${paths.length > 2 ? ` (+${paths.length - 2} more)` : ''}`;
};
