import { lstat, mkdir, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { canonicalPath, isInside } from '../../policy/protected-paths.js';
import { readHostFile } from '../../util/read-regular-file.js';
import { blake3Hex } from '../../util/blake3.js';
import { openPinnedDirectory } from '../pinned-directory.js';
import { writeWorkspaceFile } from '../file-access.js';
import { toolFailure, type ToolFailure } from '../tool.js';
import type { Workspace } from '../workspace.js';

/** A file a patch creates: where it goes, and the directories that must be made for it (outermost first). */
export interface NewFile {
  target: string;
  relative: string;
  missingDirectories: string[];
}

/**
 * Resolve a path a patch creates (an added file, a move's destination): inside the workspace, not protected, not
 * existing. Missing parent directories are allowed (models expect `*** Add File: new/dir/a.ts` to work): the nearest
 * existing ancestor must really be inside the workspace, and the directories below it are created when the patch is
 * applied.
 */
export const resolveNewFile = async (workspace: Workspace, requested: string): Promise<NewFile | ToolFailure> => {
  const writable = await workspace.resolveWritable(requested);
  if (writable.ok) {
    if (await lstat(writable.path).catch(() => undefined)) return toolFailure('InvalidInput', `${writable.relative} already exists; change it with "*** Update File:" (or delete it first)`, 'already_exists');
    return { target: writable.path, relative: writable.relative, missingDirectories: [] };
  }
  if (writable.reason !== 'not_found') return writable;
  const lexical = resolve(workspace.root, requested);
  const missing: string[] = [];
  let ancestor = dirname(lexical);
  while (!(await stat(ancestor).catch(() => undefined))) {
    missing.unshift(basename(ancestor));
    const up = dirname(ancestor);
    if (up === ancestor) break;
    ancestor = up;
  }
  const real = canonicalPath(ancestor);
  const denied = toolFailure('Denied', `${requested} is outside the workspace or protected`, 'outside_workspace');
  if (!isInside(workspace.root, real) || !(await stat(real).catch(() => undefined))?.isDirectory()) return denied;
  const directories = missing.map((_, index) => join(real, ...missing.slice(0, index + 1)));
  const target = join(real, ...missing, basename(lexical));
  if (!directories.every((directory) => workspace.allows(directory)) || !workspace.allows(target)) return denied;
  return { target, relative: workspace.display(target), missingDirectories: directories };
};

/** The BLAKE3 of a file's bytes now, or null when it is absent (or not a regular file). */
export const currentHash = async (path: string): Promise<string | null> => {
  const read = await readHostFile(path);
  return read.ok ? blake3Hex(read.bytes) : null;
};

/** Remove one file inside the workspace through its pinned directory (never following a swapped-in symlink). */
export const removeWorkspaceFile = async (workspace: Workspace, target: string): Promise<ToolFailure | undefined> => {
  const requested = workspace.display(target);
  if (!workspace.allows(target)) return toolFailure('Denied', `${requested} is outside the workspace or protected`, 'outside_workspace');
  const directory = await openPinnedDirectory(dirname(target));
  if (!directory) return toolFailure('Denied', `the directory of ${requested} changed while the call was checked`, 'outside_workspace');
  try {
    const entry = directory.at(basename(target));
    const info = await lstat(entry).catch(() => undefined);
    if (!info) return toolFailure('NotFound', `${requested} no longer exists`, 'not_found');
    if (!info.isFile() && !info.isSymbolicLink()) return toolFailure('InvalidInput', `${requested} is not a regular file`, 'not_a_file');
    await unlink(entry);
    await directory.sync();
    return undefined;
  } finally {
    await directory.close();
  }
};

/** One change of a patch, as the executor carries it out: new bytes for a path, or its removal (`after: null`). */
export interface FileChange {
  target: string;
  relative: string;
  /** The hash the file had when the patch was checked, or null for a file the patch creates. */
  before: string | null;
  /** The bytes it should have afterwards, or null to remove it. */
  after: Buffer | null;
  /** The original bytes (to put back if a later change fails), for a file that existed. */
  original: Buffer | null;
  missingDirectories: string[];
}

/**
 * Carry out every change, or none: the files are first checked to still have the content the patch was checked
 * against; a change that then fails undoes those made before it (their original bytes written back, created files
 * and directories removed). Returns the failure, or undefined when every change was made.
 */
export const applyChanges = async (workspace: Workspace, changes: readonly FileChange[]): Promise<ToolFailure | undefined> => {
  for (const change of changes) {
    const now = await currentHash(change.target);
    if (now !== change.before) {
      return toolFailure('InvalidInput', change.before === null ? `${change.relative} appeared while the patch waited; nothing was changed` : `${change.relative} changed while the patch waited; read it again — nothing was changed`, 'stale_file_baseline');
    }
  }
  const made: FileChange[] = [];
  const createdDirectories: string[] = [];
  const undo = async () => {
    for (const change of made.reverse()) {
      if (change.original) await writeWorkspaceFile(workspace, change.target, change.original).catch(() => undefined);
      else await removeWorkspaceFile(workspace, change.target).catch(() => undefined);
    }
    for (const directory of createdDirectories.reverse()) await rmdir(directory).catch(() => undefined);
  };
  try {
    for (const change of changes) {
      for (const directory of change.missingDirectories) {
        if (await stat(directory).catch(() => undefined)) continue;
        await mkdir(directory);
        createdDirectories.push(directory);
        if (canonicalPath(directory) !== directory || !workspace.allows(directory)) throw Object.assign(new Error('directory escaped'), { refused: true });
      }
      const refused = change.after === null ? await removeWorkspaceFile(workspace, change.target) : await writeWorkspaceFile(workspace, change.target, change.after);
      if (refused) {
        await undo();
        return { ...refused, message: `${refused.message}; nothing was changed` };
      }
      made.push(change);
    }
    return undefined;
  } catch (error) {
    await undo();
    if ((error as { refused?: boolean }).refused) return toolFailure('Denied', 'a directory the patch creates changed while the call was checked; nothing was changed', 'outside_workspace');
    return toolFailure('ExecutionFailed', `the patch could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was changed`, 'write_failed');
  }
};
