import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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

const escaped = (requested: string): ToolFailure => toolFailure('Denied', `${requested} is outside the workspace or protected`, 'outside_workspace');

/**
 * Read a text file the model named: resolve it canonically (symlinks followed, must end inside the workspace),
 * open it without following a final symlink, and check where the open descriptor really points before reading, so
 * a symlink swapped in after the check is refused. Binary and oversized files are `InvalidInput`.
 */
export const readWorkspaceFile = async (workspace: Workspace, requested: string): Promise<WorkspaceFile | ToolFailure> => {
  const resolved = await workspace.resolveExisting(requested);
  if (!resolved.ok) return resolved;
  let handle;
  try {
    handle = await open(resolved.path, constants.O_RDONLY | constants.O_NOFOLLOW);
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
    if (info.size > maxReadableBytes) return toolFailure('InvalidInput', `${requested} is ${info.size} bytes, more than ${maxReadableBytes}; use grep to find the part you need`, 'too_large');
    const bytes = await handle.readFile();
    if (bytes.subarray(0, 8192).includes(0)) return toolFailure('InvalidInput', `${requested} is a binary file`, 'binary_file');
    return { path: resolved.path, relative: resolved.relative, content: bytes.toString('utf8'), bytes };
  } finally {
    await handle.close();
  }
};

/**
 * Write a file atomically inside the workspace: a temp file created exclusively next to the target (its real
 * location checked through the open descriptor), flushed, then renamed over the target. An existing file keeps its
 * mode. `target` must come from `Workspace.resolveWritable`.
 */
export const writeWorkspaceFile = async (workspace: Workspace, target: string, content: string | Uint8Array): Promise<ToolFailure | undefined> => {
  const temporary = join(dirname(target), `.${basename(target)}.rein-${randomBytes(6).toString('hex')}.tmp`);
  const mode = await stat(target).then((info) => info.mode & 0o7777, () => 0o644);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  let renamed = false;
  try {
    if (!(await workspace.verifyOpened(handle.fd, temporary))) return escaped(workspace.display(target));
    await handle.writeFile(content);
    await handle.sync();
    await handle.close();
    await rename(temporary, target);
    renamed = true;
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
    if (!renamed) await rm(temporary, { force: true });
  }
};
