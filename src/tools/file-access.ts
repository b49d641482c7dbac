import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openPinnedDirectory } from './pinned-directory.js';
import { toolFailure, type ToolFailure } from './tool.js';
import type { Workspace } from './workspace.js';

/** Files larger than this are not read whole; grep or a narrower tool should be used. */
export const maxReadableBytes = 20 * 1024 * 1024;

/** A text file read through the boundary: canonical path, workspace-relative path and content. */
export interface WorkspaceFile {
  path: string;
  relative: string;
  content: string;
  bytes: Uint8Array;
}

/** The part of a target's name its temp file keeps: at most 200 bytes, so the temp name fits in 255. */
const temporaryStem = (name: string): string => {
  let stem = name;
  while (Buffer.byteLength(stem) > 200) stem = stem.slice(0, -1);
  return stem;
};

/** The name rein gives the temp file of a write to `name`: `.<name>.rein-<12 hex>.tmp`, next to it. */
export const temporaryNameOf = (name: string): string => `.${temporaryStem(name)}.rein-${randomBytes(6).toString('hex')}.tmp`;

/** True for a name `temporaryNameOf(target)` could have produced. */
export const isTemporaryOf = (name: string, target: string): boolean => {
  const stem = temporaryStem(target);
  return name.startsWith(`.${stem}.rein-`) && /^\.rein-[0-9a-f]{12}\.tmp$/.test(name.slice(stem.length + 1));
};

const escaped = (requested: string): ToolFailure => toolFailure('Denied', `${requested} is outside the workspace or protected`, 'outside_workspace');

/** A file with several names may be reached from outside the workspace under another one: file tools do not show it. */
const hardLinked = (requested: string, links: number): ToolFailure =>
  toolFailure('Denied', `${requested} has ${links} hard links; rein cannot tell whether its other names lie outside the workspace, so file tools do not read it (copy it with bash to get a private file)`, 'hard_link');

/**
 * Read a text file the model named: resolve it canonically (symlinks followed, must end inside the workspace),
 * refuse a FIFO, socket or device before opening it, open without following a final symlink and without blocking,
 * and check where the open descriptor really points before reading, so a symlink or FIFO swapped in after the check
 * is refused. Binary and oversized files are `InvalidInput`; a file with several hard links is `Denied`.
 */
export const readWorkspaceFile = async (workspace: Workspace, requested: string): Promise<WorkspaceFile | ToolFailure> => {
  const resolved = await workspace.resolveFile(requested);
  if (!resolved.ok) return resolved;
  let handle;
  try {
    handle = await open(resolved.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return escaped(requested);
    return toolFailure('NotFound', `${requested} could not be opened (${code ?? 'error'})`, 'not_found');
  }
  try {
    if (!(await workspace.verifyOpened(handle.fd, resolved.path))) return escaped(requested);
    const info = await handle.stat();
    if (info.isDirectory()) return toolFailure('InvalidInput', `${requested} is a directory; use list_dir`, 'is_directory');
    if (!info.isFile()) return toolFailure('InvalidInput', `${requested} is not a regular file`, 'not_a_file');
    if (info.nlink > 1) return hardLinked(requested, info.nlink);
    if (info.size > maxReadableBytes) return toolFailure('InvalidInput', `${requested} is ${info.size} bytes, more than ${maxReadableBytes}; use grep to find the part you need`, 'too_large');
    const bytes = await handle.readFile();
    if (bytes.subarray(0, 8192).includes(0)) return toolFailure('InvalidInput', `${requested} is a binary file`, 'binary_file');
    return { path: resolved.path, relative: resolved.relative, content: bytes.toString('utf8'), bytes };
  } finally {
    await handle.close();
  }
};

/**
 * Write a file atomically inside the workspace. The target's directory is opened by descriptor and checked to be
 * exactly the validated one; the temp file is created exclusively inside that directory (never where a swapped-in
 * symlink points), flushed, and renamed over the target within it, and the directory is synced. An existing file
 * keeps its mode; a link at the target is replaced, never followed. `target` must come from
 * `Workspace.resolveWritable`.
 */
export const writeWorkspaceFile = async (workspace: Workspace, target: string, content: string | Uint8Array): Promise<ToolFailure | undefined> => {
  const requested = workspace.display(target);
  if (!workspace.allows(target)) return escaped(requested);
  const directory = await openPinnedDirectory(dirname(target));
  if (!directory) return toolFailure('Denied', `the directory of ${requested} changed while the call was checked`, 'outside_workspace');
  const name = basename(target);
  const temporary = directory.at(temporaryNameOf(name));
  let created = false;
  let renamed = false;
  try {
    const existing = await lstat(directory.at(name)).catch(() => undefined);
    if (existing?.isDirectory()) return toolFailure('Denied', `${requested} is a directory`, 'is_directory');
    if (existing && !existing.isFile() && !existing.isSymbolicLink()) return toolFailure('InvalidInput', `${requested} is not a regular file`, 'not_a_file');
    const mode = existing?.isFile() ? existing.mode & 0o7777 : 0o644;
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    created = true;
    try {
      await handle.writeFile(content);
      if (existing?.isFile()) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, directory.at(name));
    renamed = true;
    await directory.sync();
    return undefined;
  } catch (error) {
    // The operating-system error names the target, not the descriptor path it was reached through.
    const failure = error as NodeJS.ErrnoException & { dest?: string };
    if (typeof failure.path === 'string' && failure.path.startsWith(directory.path)) failure.path = target;
    if (typeof failure.dest === 'string' && failure.dest.startsWith(directory.path)) failure.dest = target;
    throw error;
  } finally {
    if (created && !renamed) await rm(temporary, { force: true });
    await directory.close();
  }
};

/**
 * Remove the temp files an interrupted write to `path` (workspace-relative) left next to it — only names
 * `temporaryNameOf` produces for that target — and return them, workspace-relative. Called by resume for a write or
 * edit whose outcome is in doubt.
 */
export const removeInterruptedTemps = async (workspace: Workspace, path: string): Promise<string[]> => {
  const parent = await workspace.resolveExisting(dirname(path) || '.');
  if (!parent.ok) return [];
  const directory = await openPinnedDirectory(parent.path);
  if (!directory) return [];
  const removed: string[] = [];
  try {
    for (const entry of await directory.list()) {
      if (!entry.isFile() || !isTemporaryOf(entry.name, basename(path))) continue;
      await rm(directory.at(entry.name), { force: true });
      removed.push(workspace.display(`${parent.path}/${entry.name}`));
    }
  } finally {
    await directory.close();
  }
  return removed;
};
