import { lstat, rm } from 'node:fs/promises';
import { isInside } from '../policy/protected-paths.js';
import type { Workspace } from './workspace.js';

/**
 * The protected paths inside the workspace that do not exist now. The sandbox can mask only what exists, so a
 * command could create one of these (a `rein.config.json` pointing the next run's key elsewhere, a fake `.rein`).
 */
export const absentProtectedPaths = async (workspace: Workspace): Promise<string[]> => {
  const inside = workspace.protectedList().filter((path) => path !== workspace.root && isInside(workspace.root, path));
  const present = await Promise.all(inside.map((path) => lstat(path).then(() => true, () => false)));
  return inside.filter((_, index) => !present[index]);
};

/** Remove every path of `absent` that exists now (a command created it) and return them, workspace-relative. */
export const removeCreatedProtectedPaths = async (workspace: Workspace, absent: readonly string[]): Promise<string[]> => {
  const removed: string[] = [];
  for (const path of absent) {
    if (!(await lstat(path).then(() => true, () => false))) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(workspace.display(path));
  }
  return removed;
};
