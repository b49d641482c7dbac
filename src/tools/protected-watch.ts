import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { isInside, protectedKey, protectedWorkspaceEntries, reinConfigHome } from '../policy/protected-paths.js';
import type { Workspace } from './workspace.js';
import { surelyAbsent } from '../util/surely-absent.js';

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
  const readable = new Set(workspace.readableList());
  const absent: AbsentProtectedPath[] = [];
  for (const path of inside) {
    // A git configuration file or hook folder whose git directory does not exist yet is what `git init` creates: the
    // new repository is not undone (its configuration is still read-only to file tools, and `git status` asks while
    // its configuration could run a program — see git-config-hazard.ts).
    if (readable.has(path) && (await lstat(dirname(path)).catch(() => undefined)) === undefined) continue;
    const existing = await aliasesIn(dirname(path), basename(path));
    if (!existing.includes(basename(path))) absent.push({ path, existing });
  }
  return absent;
};

/**
 * Remove the entry `name` of the directory `parent` (a canonical path inside the workspace) without following any
 * link a command may have put on the way. The removal runs in a child whose working directory is pinned to `parent`
 * only after its real path is checked, so swapping `parent` (or a folder above it) for a link afterwards cannot move
 * it; `rm -rf` then removes a link itself, never what it points to, and walks a folder by descriptor. When the check
 * fails nothing is removed and false is returned.
 */
export const removeEntry = (parent: string, name: string): Promise<boolean> =>
  new Promise((resolve) => {
    const script = 'cd -P -- "$1" 2>/dev/null && [ "$(pwd -P)" = "$1" ] && exec rm -rf -- "./$2"';
    const child = spawn('/bin/sh', ['-c', script, 'rein-clean', parent, name], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });

/**
 * Where a command made a protected path appear, walking down from the workspace root by `lstat` (never following a
 * link): undefined when nothing is there (or a file stands where a folder would be); `{ link }` when a folder on the
 * way is now a link the command put in its place — the link is what makes the protected path appear, and it is what gets removed;
 * `{ parent }` when every folder on the way is a real folder, so the protected path's own name is what to look for.
 */
const whereCreated = async (root: string, path: string): Promise<{ link: string } | { parent: string } | undefined> => {
  const components = relative(root, path).split(sep);
  let parent = root;
  for (const component of components.slice(0, -1)) {
    const at = join(parent, component);
    const info = await lstat(at).catch(() => undefined);
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return { link: at };
    if (!info.isDirectory()) return undefined;
    parent = at;
  }
  return { parent };
};

/**
 * Remove every alias of an absent protected path that exists now (a command created it); returns them, workspace-relative.
 * A link a command made in place of a protected path or of a folder on its way is removed as a link: what it points
 * to (perhaps outside the workspace) is never touched.
 */
export const removeCreatedProtectedPaths = async (workspace: Workspace, absent: readonly AbsentProtectedPath[]): Promise<string[]> => {
  const removed: string[] = [];
  for (const { path, existing } of absent) {
    const where = await whereCreated(workspace.root, path);
    if (where === undefined) continue;
    if ('link' in where) {
      const display = workspace.display(where.link);
      if (!removed.includes(display) && (await removeEntry(dirname(where.link), basename(where.link)))) removed.push(display);
      continue;
    }
    for (const name of await aliasesIn(where.parent, basename(path))) {
      if (existing.includes(name)) continue;
      const created = join(where.parent, name);
      if (await removeEntry(where.parent, name)) removed.push(workspace.display(created));
    }
  }
  return removed;
};

/** A protected folder that exists, and every entry below it (workspace-relative to the folder), as a command found it. */
export interface ProtectedFolderListing {
  folder: string;
  entries: ReadonlySet<string>;
}

/** The most entries a listing of one protected folder holds; past it the folder is not watched (and said so nowhere). */
const listingLimit = 10_000;

/** Every entry below `folder` (relative paths; links are listed, never followed), or undefined past `listingLimit`. */
const listFolder = async (folder: string): Promise<Set<string> | undefined> => {
  const entries = new Set<string>();
  const walk = async (relativeDir: string): Promise<boolean> => {
    const names = await readdir(join(folder, relativeDir), { withFileTypes: true }).catch(() => []);
    for (const entry of names) {
      const path = relativeDir === '' ? entry.name : join(relativeDir, entry.name);
      entries.add(path);
      if (entries.size > listingLimit) return false;
      if (entry.isDirectory() && !(await walk(path))) return false;
    }
    return true;
  };
  return (await walk('')) ? entries : undefined;
};

/**
 * The protected folders that exist now and that nothing masks from a command run outside bubblewrap (the fallback):
 * the skill folders and the project plugins' — not rein's store, which rein itself writes while a command runs. A
 * command could plant a skill or a plugin file in one; `removeCreatedInFolders` takes out what appeared, as an absent
 * protected path a command created is removed.
 */
export const existingProtectedFolders = async (workspace: Workspace): Promise<ProtectedFolderListing[]> => {
  const listings: ProtectedFolderListing[] = [];
  for (const entry of protectedWorkspaceEntries) {
    if (entry.kind !== 'directory' || entry.path === '.rein') continue;
    const folder = join(workspace.root, entry.path);
    const info = await lstat(folder).catch(() => undefined);
    if (!info?.isDirectory()) continue;
    const entries = await listFolder(folder);
    if (entries) listings.push({ folder, entries });
  }
  return listings;
};

/**
 * Remove what appeared in the listed protected folders since they were listed (the highest new entry of each new
 * branch, as a link or a folder, never what a link points to); returns the paths removed, workspace-relative.
 */
export const removeCreatedInFolders = async (workspace: Workspace, listings: readonly ProtectedFolderListing[]): Promise<string[]> => {
  const removed: string[] = [];
  for (const { folder, entries } of listings) {
    const info = await lstat(folder).catch(() => undefined);
    if (!info?.isDirectory()) continue;
    const now = await listFolder(folder);
    if (!now) continue;
    const created = [...now].filter((path) => !entries.has(path)).sort();
    for (const path of created) {
      // Below a new entry already removed: gone with it.
      if (created.some((other) => other !== path && path.startsWith(other + sep))) continue;
      const absolute = join(folder, path);
      if (await removeEntry(dirname(absolute), basename(absolute))) removed.push(workspace.display(absolute));
    }
  }
  return removed;
};

/** Per session, the workspaces and absent protected paths of its background commands, as each started. */
const backgroundBaselines = new Map<string, Array<{ workspace: Workspace; absent: readonly AbsentProtectedPath[]; folders: readonly ProtectedFolderListing[] }>>();

/**
 * Where the baselines of a session's background commands are kept on disk: `background/<workspace digest>/<sessionId>.json`
 * in rein's per-user configuration folder (outside the workspace, so the check itself never sees it appear). A rein
 * killed outright never runs its end's check; the next session in the workspace finds the file and runs it
 * (`sweepLeftBackground`).
 */
const baselineFolder = (root: string): string => join(reinConfigHome(), 'background', workspaceDigest(root));

/** The workspace's part of `baselineFolder`, kept per root (a pure function of it; the last few roots only). */
const workspaceDigests = new Map<string, string>();
const workspaceDigest = (root: string): string => {
  let digest = workspaceDigests.get(root);
  if (digest === undefined) {
    digest = createHash('sha256').update(root).digest('hex').slice(0, 32);
    if (workspaceDigests.size >= 64) workspaceDigests.clear();
    workspaceDigests.set(root, digest);
  }
  return digest;
};
const baselineFile = (root: string, sessionId: string): string => join(baselineFolder(root), `${sessionId}.json`);

interface StoredBaseline {
  pid: number;
  absent: AbsentProtectedPath[];
  folders: Array<{ folder: string; entries: string[] }>;
}

const writeBaselines = async (sessionId: string, root: string): Promise<void> => {
  const watched = (backgroundBaselines.get(sessionId) ?? []).filter((entry) => entry.workspace.root === root);
  const stored: StoredBaseline[] = watched.map(({ absent, folders }) => ({ pid: process.pid, absent: [...absent], folders: folders.map(({ folder, entries }) => ({ folder, entries: [...entries] })) }));
  await mkdir(dirname(baselineFile(root, sessionId)), { recursive: true });
  await writeFile(baselineFile(root, sessionId), JSON.stringify(stored));
};

/**
 * Remember what was absent when a background command started: it keeps running after its call's own check, so it
 * could create a protected path later. `cleanAfterBackground` checks again once the session's commands are stopped;
 * the baseline is also written to rein's configuration folder, for the next session should this process be
 * killed before that check.
 */
export const watchBackground = async (sessionId: string, workspace: Workspace, absent: readonly AbsentProtectedPath[], folders: readonly ProtectedFolderListing[] = []): Promise<void> => {
  if (absent.length === 0 && folders.length === 0) return;
  const watched = backgroundBaselines.get(sessionId) ?? [];
  watched.push({ workspace, absent, folders });
  backgroundBaselines.set(sessionId, watched);
  await writeBaselines(sessionId, workspace.root).catch(() => undefined);
};

/**
 * The check after a session's background commands were stopped: every protected path absent when one of them
 * started and present now is removed (as `removeCreatedProtectedPaths` does). Returns the paths removed, once each.
 */
export const cleanAfterBackground = async (sessionId: string): Promise<string[]> => {
  const watched = backgroundBaselines.get(sessionId) ?? [];
  backgroundBaselines.delete(sessionId);
  const removed = new Set<string>();
  for (const { workspace, absent, folders } of watched) for (const path of [...(await removeCreatedProtectedPaths(workspace, absent)), ...(await removeCreatedInFolders(workspace, folders))]) removed.add(path);
  for (const root of new Set(watched.map((entry) => entry.workspace.root))) await rm(baselineFile(root, sessionId), { force: true });
  return [...removed];
};

/** Whether a process of this id runs (as far as this user can tell). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The check a session's end would have run, for background commands whose rein was killed before it (issue 30 E): the
 * baselines (see `baselineFile`) written by a process that no longer runs are checked against the workspace now —
 * what a command planted since is removed — and their files deleted. A process that still runs keeps its own. Returns
 * the paths removed (workspace-relative) and the sessions they were left by.
 */
export const sweepLeftBackground = async (workspace: Workspace): Promise<{ paths: string[]; sessions: string[] }> => {
  const folder = baselineFolder(workspace.root);
  // Almost always absent (no background command was ever left here): asked without an exception.
  const names = surelyAbsent(folder) ? [] : await readdir(folder).catch(() => [] as string[]);
  const removed = new Set<string>();
  const sessions: string[] = [];
  for (const name of names.filter((entry) => entry.endsWith('.json')).sort()) {
    const sessionId = name.slice(0, -'.json'.length);
    if (backgroundBaselines.has(sessionId)) continue;
    const stored = await readFile(join(folder, name), 'utf8').then((text) => JSON.parse(text) as StoredBaseline[]).catch(() => undefined);
    if (!Array.isArray(stored)) {
      await rm(join(folder, name), { force: true });
      continue;
    }
    if (stored.some((entry) => entry.pid === process.pid || alive(entry.pid))) continue;
    for (const entry of stored) {
      const absent = (entry.absent ?? []).filter((item) => typeof item?.path === 'string' && isInside(workspace.root, item.path)).map((item) => ({ path: item.path, existing: Array.isArray(item.existing) ? item.existing : [] }));
      const folders = (entry.folders ?? []).filter((item) => typeof item?.folder === 'string' && isInside(workspace.root, item.folder)).map((item) => ({ folder: item.folder, entries: new Set(item.entries) }));
      for (const path of [...(await removeCreatedProtectedPaths(workspace, absent)), ...(await removeCreatedInFolders(workspace, folders))]) removed.add(path);
    }
    sessions.push(sessionId);
    await rm(join(folder, name), { force: true });
  }
  return { paths: [...removed].sort(), sessions };
};
