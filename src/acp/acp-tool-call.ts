import { isAbsolute, join } from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import { summarizeArguments } from '../cli/transcript.js';
import { parsePatch } from '../tools/patch/patch-parse.js';
import { patchPaths, patchTargets } from '../tools/patch/patch-paths.js';

/*
 * How a rein tool call looks to an ACP client: its kind (the icon), title, the files it touches ("follow along") and,
 * once it settled, its output and the edits as diffs. Derived from the call's name and arguments (and what the log
 * says it wrote), so a live turn and a `session/load` of the same log show the same thing.
 */

const kinds: Readonly<Record<string, ToolKind>> = {
  read: 'read',
  read_artifact: 'read',
  memory_read: 'read',
  skill: 'read',
  write: 'edit',
  edit: 'edit',
  edit_lines: 'edit',
  list_dir: 'search',
  glob: 'search',
  grep: 'search',
  tool_search: 'search',
  list_mcp_resources: 'search',
  read_mcp_resource: 'fetch',
  bash: 'execute',
  update_plan: 'think',
};

/** The ACP kind of a call: `apply_patch` is `delete` or `move` when that is all its patch does, else `edit`. */
export const toolKindOf = (name: string, args: Record<string, unknown>): ToolKind => {
  if (name !== 'apply_patch') return kinds[name] ?? 'other';
  const targets = patchTargets(args.input);
  if (targets.length > 0 && targets.every((target) => target.kind === 'delete')) return 'delete';
  if (targets.length > 0 && targets.every((target) => target.kind === 'update' && target.moveTo !== undefined)) return 'move';
  return 'edit';
};

/** A call's title as a person reads it: `read src/a.ts`, `bash npm test`, `apply_patch patch a.ts, b.ts`. */
export const toolTitleOf = (name: string, args: Record<string, unknown>): string => {
  if (name === 'update_plan' && Array.isArray(args.plan)) return `update plan (${args.plan.filter((step: { status?: unknown }) => step?.status === 'completed').length} of ${args.plan.length} done)`;
  const summary = summarizeArguments(args);
  return summary === '{}' || summary === '' ? name : `${name} ${summary}`;
};

const absolute = (workspace: string, path: string): string => (isAbsolute(path) ? path : join(workspace, path));

/** The files a call touches, absolute (ACP paths are), with the first line a read starts at. */
export const toolLocationsOf = (name: string, args: Record<string, unknown>, workspace: string): ToolCallLocation[] => {
  if (name === 'apply_patch') return patchPaths(args.input).map((path) => ({ path: absolute(workspace, path) }));
  if (typeof args.path !== 'string' || name === 'glob' || name === 'grep' || name === 'list_dir') return [];
  const line = name === 'read' && typeof args.offset === 'number' ? { line: args.offset } : {};
  return [{ path: absolute(workspace, args.path), ...line }];
};

/**
 * The edits a settled call made, as ACP diffs: an `edit`'s replaced text, a `write` that created a file, each file
 * an `apply_patch` added or updated (its hunks' old and new lines). `createdPaths` are the files the log says the
 * call wrote without a previous version. A `write` over an existing file shows its output only (its old content is
 * not in the log).
 */
export const toolDiffsOf = (name: string, args: Record<string, unknown>, workspace: string, createdPaths: ReadonlySet<string>): ToolCallContent[] => {
  if (name === 'edit' && typeof args.path === 'string' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
    return [{ type: 'diff', path: absolute(workspace, args.path), oldText: args.old_string, newText: args.new_string }];
  }
  if (name === 'write' && typeof args.path === 'string' && typeof args.content === 'string' && createdPaths.has(args.path)) {
    return [{ type: 'diff', path: absolute(workspace, args.path), newText: args.content }];
  }
  if (name !== 'apply_patch' || typeof args.input !== 'string') return [];
  const parsed = parsePatch(args.input);
  if (!parsed.ok) return [];
  return parsed.operations.flatMap((operation): ToolCallContent[] => {
    if (operation.kind === 'add') return [{ type: 'diff', path: absolute(workspace, operation.path), newText: operation.lines.map((line) => `${line}\n`).join('') }];
    if (operation.kind === 'delete') return [];
    const lines = operation.hunks.flatMap((hunk) => hunk.lines);
    const oldText = lines.filter((line) => line.kind !== 'add').map((line) => line.text).join('\n');
    const newText = lines.filter((line) => line.kind !== 'remove').map((line) => line.text).join('\n');
    return [{ type: 'diff', path: absolute(workspace, operation.moveTo ?? operation.path), oldText, newText }];
  });
};
