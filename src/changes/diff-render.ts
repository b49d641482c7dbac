import type { TreeEntry } from '../../models/workspace.records.js';
import { shownPath, type FileChange } from './file-change.js';
import type { SessionDiff, StepChanges } from './session-diff.js';
import { lineCounts, unifiedHunks } from './unified-diff.js';

/** Reads a stored content by its ref (undefined when it is not there). */
export type ContentReader = (ref: string) => Promise<Uint8Array | undefined>;

/** A content as a diff shows it: its text, or why there is none (binary, never stored, missing). */
type Shown = { text: string } | { binary: number } | { unstored: number } | { missing: true };

const textDecoder = new TextDecoder('utf-8', { fatal: true });

const shownContent = async (entry: TreeEntry | undefined, read: ContentReader): Promise<Shown> => {
  if (!entry || entry.type === 'dir') return { text: '' };
  if (entry.type === 'symlink') return { text: `${entry.target}\n` };
  if (entry.unrestorable) return { unstored: entry.size };
  const bytes = await read(entry.content);
  if (!bytes) return { missing: true };
  if (bytes.subarray(0, 8_000).includes(0)) return { binary: bytes.length };
  try {
    return { text: textDecoder.decode(bytes) };
  } catch {
    return { binary: bytes.length };
  }
};

const bytesText = (count: number): string => (count < 10_240 ? `${count} bytes` : count < 10 * 1024 * 1024 ? `${(count / 1024).toFixed(1)} KB` : `${(count / 1024 / 1024).toFixed(1)} MB`);

const sizeOf = (shown: Shown, entry: TreeEntry | undefined): string => (entry?.type === 'file' ? bytesText(entry.size) : 'binary' in shown ? bytesText(shown.binary) : '-');

const modeText = (entry: TreeEntry | undefined): string => (entry?.type === 'file' ? `100${entry.mode.toString(8).padStart(3, '0')}` : entry?.type === 'symlink' ? '120000' : entry ? `40${entry.mode.toString(8).padStart(3, '0')}` : '');

/** The header of one step's changes. */
export const stepTitle = (step: StepChanges): string => {
  const who = step.actor === 'root' ? '' : ` [${step.actor}]`;
  if (step.source === 'call') return `#${step.seq}${who} ${step.tool ?? 'call'} ${step.callId ?? step.effectId ?? ''}`.trimEnd();
  if (step.source === 'outside') return `#${step.seq} outside rein`;
  if (step.source === 'rewind') return `#${step.seq} rewind to #${step.toSeq ?? '?'}`;
  return `#${step.seq} between calls`;
};

/** One file's unified diff (a binary or an unstored content summarised). */
const fileDiff = async (change: FileChange, read: ContentReader): Promise<string> => {
  const { before, after } = change;
  const oldPath = change.from ?? change.path;
  const header = [`diff --rein a/${shownPath(oldPath, before ?? after)} b/${shownPath(change.path, after ?? before)}`];
  if (change.from !== undefined) {
    // A rename keeps its content (that is how it was paired): only the names (and a mode) differ.
    header.push(`rename from ${change.from}`, `rename to ${change.path}`);
    return header.join('\n');
  }
  if (!before) header.push(`new ${after?.type === 'dir' ? 'directory' : after?.type === 'symlink' ? 'symlink' : 'file'} mode ${modeText(after)}`);
  else if (!after) header.push(`deleted ${before.type === 'dir' ? 'directory' : before.type === 'symlink' ? 'symlink' : 'file'} mode ${modeText(before)}`);
  else if (modeText(before) !== modeText(after)) header.push(`old mode ${modeText(before)}`, `new mode ${modeText(after)}`);
  if (before?.type === 'dir' || after?.type === 'dir') return header.join('\n');
  const [old, next] = await Promise.all([shownContent(before, read), shownContent(after, read)]);
  if (!('text' in old) || !('text' in next)) {
    const why = 'unstored' in old || 'unstored' in next ? 'contents above the size cap, never stored' : 'missing' in old || 'missing' in next ? 'contents missing from the store' : 'binary';
    if ((before?.type === 'file' ? before.content : undefined) !== (after?.type === 'file' ? after.content : undefined)) header.push(`Binary files differ (${why}): ${before ? sizeOf(old, before) : '(none)'} → ${after ? sizeOf(next, after) : '(none)'}`);
    return header.join('\n');
  }
  const hunks = unifiedHunks(old.text, next.text);
  if (hunks.length === 0) return header.join('\n');
  header.push(`--- ${before ? `a/${oldPath}` : '/dev/null'}`, `+++ ${after ? `b/${change.path}` : '/dev/null'}`, ...hunks);
  return header.join('\n');
};

/** One file's diff-stat line: lines added and removed, or a binary's sizes. */
const statLine = async (change: FileChange, read: ContentReader, width: number): Promise<{ line: string; added: number; removed: number }> => {
  const name = change.from !== undefined ? `${change.from} → ${change.path}` : shownPath(change.path, change.after ?? change.before);
  const padded = name.padEnd(width);
  if (change.after?.type === 'dir' || change.before?.type === 'dir') return { line: ` ${padded} | ${change.kind === 'mode' ? 'mode' : change.kind}`, added: 0, removed: 0 };
  const [old, next] = await Promise.all([shownContent(change.before, read), shownContent(change.after, read)]);
  if (!('text' in old) || !('text' in next)) return { line: ` ${padded} | Bin ${change.before ? sizeOf(old, change.before) : '0 bytes'} → ${change.after ? sizeOf(next, change.after) : '0 bytes'}`, added: 0, removed: 0 };
  const { added, removed } = lineCounts(old.text, next.text);
  const mode = change.kind === 'mode' ? ' (mode)' : '';
  return { line: ` ${padded} | ${String(added + removed).padStart(4)} ${'+'.repeat(Math.min(added, 40))}${'-'.repeat(Math.min(removed, 40))}${mode}`, added, removed };
};

/** A diff stat of some changes, with the totals line. */
export const renderStat = async (changes: readonly FileChange[], read: ContentReader): Promise<string> => {
  const width = Math.min(60, Math.max(0, ...changes.map((change) => (change.from !== undefined ? `${change.from} → ${change.path}` : shownPath(change.path, change.after ?? change.before)).length)));
  const lines: string[] = [];
  let added = 0;
  let removed = 0;
  for (const change of changes) {
    const stat = await statLine(change, read, width);
    lines.push(stat.line);
    added += stat.added;
    removed += stat.removed;
  }
  lines.push(` ${changes.length} path${changes.length === 1 ? '' : 's'} changed, ${added} insertion${added === 1 ? '' : 's'}(+), ${removed} deletion${removed === 1 ? '' : 's'}(-)`);
  return lines.join('\n');
};

/** Unified diffs of some changes. */
export const renderChanges = async (changes: readonly FileChange[], read: ContentReader): Promise<string> => {
  const parts: string[] = [];
  for (const change of changes) parts.push(await fileDiff(change, read));
  return parts.join('\n');
};

/** A session diff as `rein diff` prints it: each step's title and its diffs (or stat), then the net change when asked. */
export const renderSessionDiff = async (diff: SessionDiff, read: ContentReader, options: { stat?: boolean } = {}): Promise<string> => {
  const render = options.stat ? renderStat : renderChanges;
  const parts: string[] = [];
  if (diff.net === undefined) for (const step of diff.steps) parts.push(`${stepTitle(step)}\n${await render(step.files, read)}`);
  else parts.push(`net change of ${diff.sessionId}${diff.net.length === 0 ? ': none' : `\n${await render(diff.net, read)}`}`);
  if (parts.length === 0) parts.push(diff.capturedSeq === undefined ? `${diff.sessionId} recorded no workspace changes (it made no call that may change files)` : 'no workspace changes');
  return `${parts.join('\n\n')}\n`;
};
