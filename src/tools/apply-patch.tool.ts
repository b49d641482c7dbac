import * as z from 'zod';
import { blake3Hex } from '../util/blake3.js';
import { removeInterruptedTemps } from './file-access.js';
import { excerpt, loadForEdit } from './edit-commit.js';
import { addedFileBytes, applyHunks, mismatchText } from './patch/patch-apply.js';
import { applyChanges, currentHash, resolveNewFile, type FileChange } from './patch/patch-files.js';
import { parsePatch } from './patch/patch-parse.js';
import { defineTool, toolFailure, type FileAccess, type ToolContext, type ToolFailure } from './tool.js';
import type { Workspace } from './workspace.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const ApplyPatchParameters = lazySchema(() => z
  .object({
    input: z.string().min(1).describe('The whole patch, from "*** Begin Patch" to "*** End Patch"'),
  })
  .strict());
export type ApplyPatchParameters = z.infer<typeof ApplyPatchParameters>;

/** A checked patch: the changes to make, what each file's result shows, and the lines each change touched. */
interface PatchPlan {
  changes: FileChange[];
  summary: string[];
  shown: Array<{ relative: string; content: string; changedLines: number[] }>;
}

const description = [
  'Change files with a patch in this format (paths relative to the workspace):',
  '*** Begin Patch',
  '*** Add File: <path>        (then every line of the new file, each starting with +)',
  '*** Delete File: <path>',
  '*** Update File: <path>',
  '*** Move to: <new path>     (optional, right after Update File)',
  '@@ <optional line to find first, e.g. a function signature>',
  ' <context line, copied exactly>',
  '-<line to remove>',
  '+<line to add>',
  '*** End Patch',
  'Give about 3 lines of context around each change. Files you update must have been read in this session. All of the patch applies, or none of it.',
].join('\n');

type Prepared = { ok: true; plan: PatchPlan; subject: { target?: string; parts?: string[] }; intent: Record<string, unknown> } | ToolFailure;

/** Parse, resolve and apply the patch in memory: every change is computed (and every hunk matched) before anything is written. */
const preparePatch = async (input: string, context: ToolContext): Promise<Prepared> => {
  const parsed = parsePatch(input);
  if (!parsed.ok) return toolFailure('InvalidInput', `the patch is malformed: ${parsed.message}. Nothing was changed.`, 'patch_invalid');
  const changes: FileChange[] = [];
  const summary: string[] = [];
  const shown: PatchPlan['shown'] = [];
  for (const operation of parsed.operations) {
    if (operation.kind === 'add') {
      const created = await resolveNewFile(context.workspace, operation.path);
      if ('ok' in created) return created;
      const bytes = addedFileBytes(operation.lines);
      changes.push({ target: created.target, relative: created.relative, before: null, after: bytes, original: null, missingDirectories: created.missingDirectories });
      summary.push(`added ${created.relative} (${operation.lines.length} line${operation.lines.length === 1 ? '' : 's'})`);
      shown.push({ relative: created.relative, content: bytes.toString('utf8'), changedLines: [1] });
      continue;
    }
    // An update or a delete acts on a file the model has read, unchanged since: its baseline, as `edit` requires.
    const file = await loadForEdit(context, operation.path, operation.kind === 'update');
    if (!('content' in file)) return file;
    const original = Buffer.from(file.bytes);
    if (operation.kind === 'delete') {
      changes.push({ target: file.target, relative: file.relative, before: file.hash, after: null, original, missingDirectories: [] });
      summary.push(`deleted ${file.relative}`);
      continue;
    }
    const applied = applyHunks(original, operation.hunks);
    if (!applied.ok) return toolFailure('InvalidInput', mismatchText(file.relative, applied.mismatch), 'hunk_mismatch');
    const hunks = `${operation.hunks.length} hunk${operation.hunks.length === 1 ? '' : 's'}`;
    if (operation.moveTo === undefined) {
      changes.push({ target: file.target, relative: file.relative, before: file.hash, after: applied.bytes, original, missingDirectories: [] });
      summary.push(`updated ${file.relative} (${hunks})`);
      shown.push({ relative: file.relative, content: applied.bytes.toString('utf8'), changedLines: applied.changedLines });
      continue;
    }
    const destination = await resolveNewFile(context.workspace, operation.moveTo);
    if ('ok' in destination) return destination;
    changes.push({ target: destination.target, relative: destination.relative, before: null, after: applied.bytes, original: null, missingDirectories: destination.missingDirectories });
    changes.push({ target: file.target, relative: file.relative, before: file.hash, after: null, original, missingDirectories: [] });
    summary.push(`updated ${file.relative} (${hunks}) and moved it to ${destination.relative}`);
    shown.push({ relative: destination.relative, content: applied.bytes.toString('utf8'), changedLines: applied.changedLines });
  }
  const paths = changes.map((change) => change.relative);
  return {
    ok: true,
    plan: { changes, summary, shown },
    // One file: rules match its path. Several: a deny rule matching any of them denies, and only a rule for the
    // whole tool allows without asking (an allow pattern covering one path must not carry the others).
    subject: paths.length === 1 ? { target: paths[0]! } : { parts: paths },
    intent: { paths: changes.map((change) => ({ path: change.relative, before: change.before, after: change.after === null ? null : blake3Hex(change.after) })) },
  };
};

/** The result's text: what changed, then each added or updated file with fresh tags near its changes, within the budget. */
const resultText = (plan: PatchPlan, budget: number): string => {
  const parts = [`applied the patch: ${plan.summary.join('; ')}`];
  let left = budget - parts[0]!.length;
  for (const file of plan.shown) {
    const body = `${file.relative}:\n${excerpt(file.content, file.changedLines)}`;
    if (body.length > left) {
      parts.push(`${file.relative}: (not shown: over the output budget; read it for fresh tags)`);
      continue;
    }
    parts.push(body);
    left -= body.length;
  }
  return parts.join('\n');
};

/**
 * `apply_patch` — one patch in OpenAI's format (`{ "input": "*** Begin Patch …" }`), through the same boundary as
 * `edit`: workspace paths only, protected paths refused, files it updates (or deletes) must have been read in this
 * session and be unchanged since, added files and move destinations must not exist. Every hunk of every file is
 * matched before anything is written (a malformed patch is `patch_invalid`, a hunk that does not match is
 * `hunk_mismatch`, naming the hunk and showing the nearest lines), and then all changes are made or none. Lines the
 * hunks do not touch keep their bytes.
 */
export const applyPatchTool = defineTool<ApplyPatchParameters, PatchPlan>({
  name: 'apply_patch',
  description,
  parameters: ApplyPatchParameters,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  prepare: (args, context) => preparePatch(args.input, context),
  async execute(_args, context, plan) {
    const refused = await applyChanges(context.workspace, plan.changes);
    if (refused) return refused;
    const files: FileAccess[] = plan.changes.flatMap((change) => (change.after === null ? [] : [{ path: change.relative, hash: blake3Hex(change.after), access: 'write' as const, before: change.before }]));
    return {
      ok: true,
      output: resultText(plan, context.outputBudget),
      data: { paths: plan.changes.map((change) => ({ path: change.relative, change: change.after === null ? 'deleted' : change.before === null ? 'added' : 'updated' })) },
      files,
    };
  },
  async checkResume(intent, { workspace }) {
    const entries = Array.isArray(intent?.paths) ? (intent.paths as Array<{ path: string; before: string | null; after: string | null }>) : undefined;
    if (!entries) return { resolution: 'rerun', reason: 'it never started' };
    const cleaned: string[] = [];
    let applied = 0;
    let untouched = 0;
    for (const entry of entries) {
      cleaned.push(...(await removeInterruptedTemps(workspace, entry.path)));
      const now = await hashOf(workspace, entry.path);
      if (now === entry.after) applied++;
      if (now === entry.before) untouched++;
    }
    if (applied === entries.length) return { resolution: 'settled-from-log', reason: 'every file already has the patched content', observation: `applied the patch (confirmed after a restart: ${entries.length} file${entries.length === 1 ? '' : 's'} already patched)`, cleaned };
    if (untouched === entries.length) return { resolution: 'rerun', reason: 'every file still has the content the patch was checked against', cleaned };
    return { resolution: 'awaiting-confirmation', reason: 'the patch was partly applied when the process stopped', cleaned };
  },
});

const hashOf = async (workspace: Workspace, path: string): Promise<string | null> => {
  const resolved = await workspace.resolveExisting(path);
  return resolved.ok ? currentHash(resolved.path) : null;
};
