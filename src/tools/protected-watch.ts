import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isInside, protectedKey } from '../policy/protected-paths.js';
import type { Workspace } from './workspace.js';

/** Entries of a directory that alias `name` (the same name up to case and Unicode normalisation). */
const aliasesIn = async (directory: string, name: string): Promise<string[]> => {
  const key = protectedKey(name);
  const entries = await readdir(directory).catch(() => [] as string[]);
  return entries.filter((entry) => protectedKey(entry) === key);
};

/** What existed where a protected path is absent: the aliases of its name already in its directory. */
export interface AbsentProtectedPath {
  path: string;
  existing: readonly string[];
}

/**
 * The protected paths inside the workspace that do not exist now. The sandbox can mask only what exists, so a
 * command could create one of these (a `rein.config.json` pointing the next run's key elsewhere, a fake `.rein`) or
 * an alias of one (`REIN.CONFIG.JSON`, which is the same file on a case-insensitive file system).
 */
export const absentProtectedPaths = async (workspace: Workspace): Promise<AbsentProtectedPath[]> => {
  const inside = workspace.protectedList().filter((path) => path !== workspace.root && isInside(workspace.root, path));
  const absent: AbsentProtectedPath[] = [];
  for (const path of inside) {
    const existing = await aliasesIn(dirname(path), basename(path));
    if (!existing.includes(basename(path))) absent.push({ path, existing });
  }
  return absent;
};

/** Remove every alias of an absent protected path that exists now (a command created it); returns them, workspace-relative. */
export const removeCreatedProtectedPaths = async (workspace: Workspace, absent: readonly AbsentProtectedPath[]): Promise<string[]> => {
  const removed: string[] = [];
  for (const { path, existing } of absent) {
    for (const name of await aliasesIn(dirname(path), basename(path))) {
      if (existing.includes(name)) continue;
      const created = join(dirname(path), name);
      await rm(created, { recursive: true, force: true });
      removed.push(workspace.display(created));
    }
  }
  return removed;
};
