import { readHostFile } from '../util/read-regular-file.js';
import type { InputRepair } from '../../models/tool.records.js';
import { blake3Hex } from '../util/blake3.js';
import { readWorkspaceFile, removeInterruptedTemps, writeWorkspaceFile } from './file-access.js';
import { renderTaggedLines, splitLines } from './line-tags.js';
import { toolFailure, type Prepared, type ResumeCheck, type ToolContext, type ToolFailure, type ToolResult } from './tool.js';
import type { Workspace } from './workspace.js';

/**
 * A prepared edit: the file, the content hash it was computed from, the new bytes and the lines it changed. Edits
 * work on bytes: what the edit did not touch is written back byte for byte, whatever its encoding.
 */
export interface EditPlan {
  target: string;
  relative: string;
  before: string;
  bytes: Uint8Array;
  /** 1-based line numbers in the new content around which the result shows fresh tags. */
  changedLines: number[];
}

/** Read the file an edit targets and, when `requireBaseline`, check it was read in this session and has not changed since. */
export const loadForEdit = async (context: ToolContext, path: string, requireBaseline: boolean): Promise<{ target: string; relative: string; content: string; bytes: Uint8Array; hash: string } | ToolFailure> => {
  const file = await readWorkspaceFile(context.workspace, path);
  if (!('content' in file)) return file;
  const writable = await context.workspace.resolveWritable(file.relative);
  if (!writable.ok) return writable;
  const hash = blake3Hex(file.bytes);
  if (requireBaseline) {
    const baseline = context.baselines.get(file.relative);
    if (baseline === undefined) return toolFailure('InvalidInput', `${file.relative} has not been read in this session; read it first, then edit`, 'runtime_precondition_failed');
    if (baseline !== hash) return toolFailure('InvalidInput', `${file.relative} changed since you last read it; read it again before editing`, 'stale_file_baseline');
  }
  return { target: writable.path, relative: file.relative, content: file.content, bytes: file.bytes, hash };
};

/** The prepared form of an edit plan: permission matches the path; `tool.started` records before/after hashes for resume. */
export const preparedEdit = (plan: EditPlan, repairs: readonly InputRepair[] = []): Prepared<EditPlan> => ({
  ok: true,
  plan,
  subject: { target: plan.relative },
  intent: { path: plan.relative, before: plan.before, after: blake3Hex(plan.bytes) },
  ...(repairs.length > 0 ? { repairs: [...repairs] } : {}),
});

/** A file's content with fresh tags: whole when short, else the lines near `changedLines` (as edits show it). */
export const excerpt = (content: string, changedLines: readonly number[]): string => {
  const { lines } = splitLines(content);
  if (lines.length <= 200) return renderTaggedLines(lines, 1);
  const shown = new Set<number>();
  for (const line of changedLines) for (let near = line - 3; near <= line + 3; near++) if (near >= 1 && near <= lines.length) shown.add(near);
  const ordered = [...shown].sort((left, right) => left - right);
  const parts: string[] = [];
  let previous = 0;
  for (const line of ordered) {
    if (line !== previous + 1) parts.push('…');
    parts.push(renderTaggedLines([lines[line - 1]!], line));
    previous = line;
  }
  return `${parts.join('\n')}\n(${lines.length} lines; showing the lines near the edit — read the file for the rest)`;
};

/**
 * Carry out a prepared edit: re-read the file and refuse if it changed since the plan was made, then write it
 * atomically. The result shows the new content (or the edited region of a long file) with fresh tags.
 */
export const commitEdit = async (context: ToolContext, plan: EditPlan, summary: string): Promise<ToolResult> => {
  const current = await loadForEdit(context, plan.relative, false);
  if (!('content' in current)) return current;
  if (current.target !== plan.target) return toolFailure('Denied', `${plan.relative} moved outside the workspace while the call was checked`, 'outside_workspace');
  if (current.hash !== plan.before) return toolFailure('InvalidInput', `${plan.relative} changed while the edit waited; read it again`, 'stale_file_baseline');
  const refused = await writeWorkspaceFile(context.workspace, plan.target, plan.bytes);
  if (refused) return refused;
  const after = blake3Hex(plan.bytes);
  return {
    ok: true,
    output: `${summary}\n${excerpt(Buffer.from(plan.bytes).toString('utf8'), plan.changedLines)}`,
    data: { path: plan.relative, before: plan.before, after },
    files: [{ path: plan.relative, hash: after, access: 'write', before: plan.before }],
  };
};

/** Resume check for edits: the recorded before/after hashes against the file now. */
export const checkEditResume = async (intent: Record<string, unknown> | undefined, workspace: Workspace): Promise<ResumeCheck> => {
  const path = typeof intent?.path === 'string' ? intent.path : undefined;
  if (!path) return { resolution: 'rerun', reason: 'it never started' };
  const cleaned = await removeInterruptedTemps(workspace, path);
  const resolved = await workspace.resolveExisting(path);
  const read = resolved.ok ? await readHostFile(resolved.path) : undefined;
  const hash = read?.ok ? blake3Hex(read.bytes) : null;
  if (hash !== null && hash === intent?.after) return { resolution: 'settled-from-log', reason: 'the file already has the edited content', observation: `edited ${path} (confirmed after a restart: the edit is in the file)`, cleaned };
  if (hash !== null && hash === intent?.before) return { resolution: 'rerun', reason: 'the file still has the content the edit was checked against', cleaned };
  return { resolution: 'awaiting-confirmation', reason: `${path} matches neither the content before nor after the edit`, cleaned };
};

/**
 * The first line where a file's bytes are not UTF-8, or undefined for valid UTF-8. `read` shows such bytes as
 * U+FFFD; an edit never writes that replacement back over them.
 */
export const invalidUtf8Line = (bytes: Uint8Array): number | undefined => {
  const original = Buffer.from(bytes);
  // Valid UTF-8 survives decoding and re-encoding unchanged; where it first does not, the bad bytes are.
  const roundTrip = Buffer.from(original.toString('utf8'), 'utf8');
  if (roundTrip.equals(original)) return undefined;
  let index = 0;
  while (index < original.length && original[index] === roundTrip[index]) index++;
  let line = 1;
  for (let at = 0; at < index; at++) if (original[at] === 0x0a) line++;
  return line;
};
