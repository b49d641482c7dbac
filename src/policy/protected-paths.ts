import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { chainKeyPath, reinConfigHome as configHomeOf } from '../../stores/chain-key-file.js';

/** One path inside every workspace that no tool and no sandboxed command may read or change. */
export interface ProtectedEntry {
  /** Workspace-relative path, `/`-separated. */
  path: string;
  kind: 'file' | 'directory';
  /** Why it is protected (shown by `rein sandbox`). */
  why: string;
}

/**
 * The protected entries of every workspace. This list is the one place to extend: file tools refuse these paths
 * (compared by real path), searches leave them out, the shell classifier never lets a command naming them run
 * unasked, and the sandbox masks them.
 */
export const protectedWorkspaceEntries: readonly ProtectedEntry[] = Object.freeze([
  { path: '.rein', kind: 'directory', why: 'the event store: a model that could edit its own log could rewrite what happened' },
  { path: 'rein.config.json', kind: 'file', why: 'provider settings: a model that could rewrite them could send the next run\'s API key elsewhere' },
  { path: '.mcp.json', kind: 'file', why: 'MCP servers: a model that could write it could make the next run start a command of its choosing' },
  { path: '.agents/skills', kind: 'directory', why: 'skills: a model that could write one could steer the next run (skill files are read through the skill tool)' },
  { path: '.claude/skills', kind: 'directory', why: 'skills: a model that could write one could steer the next run (skill files are read through the skill tool)' },
  { path: '.rein-plugins', kind: 'directory', why: 'project plugins: code rein loads into its own process once trusted' },
]);

/** The files and folders of a git directory that make git run a program or are read as its configuration. */
const gitControlNames = ['config', 'config.worktree', 'hooks', join('info', 'attributes')];

/** The git directory a `.git` file (`gitdir: …`, a worktree or submodule checkout) names, or undefined. */
const gitDirOfFile = (dotGit: string): string | undefined => {
  try {
    if (!lstatSync(dotGit, { throwIfNoEntry: false })?.isFile()) return undefined;
    const target = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8').slice(0, 4096))?.[1]?.trim();
    return target === undefined ? undefined : isAbsolute(target) ? target : resolve(dirname(dotGit), target);
  } catch {
    return undefined;
  }
};

/** How deep below the workspace, and through how many folders, the search for nested repositories goes. */
const nestedDepth = 4;
const nestedFolderBudget = 4_000;

/** Folders that hold no checkout of their own worth the walk (dependencies, rein's store, git's own folders). */
const skippedFolders = new Set(['.git', 'node_modules', '.rein', '.venv', 'venv', '__pycache__', 'target', 'dist', 'build']);

/**
 * The folders below `root` holding a `.git` of their own (a folder, or a `gitdir:` file), found breadth first, at most
 * `nestedDepth` levels down and through at most `nestedFolderBudget` folders, so a large tree costs a bounded walk at
 * the session's start. Symbolic links are not followed.
 */
const nestedCheckouts = (root: string): string[] => {
  const found: string[] = [];
  let visited = 0;
  let level = [root];
  for (let depth = 0; depth < nestedDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const folder of level) {
      if (++visited > nestedFolderBudget) return found;
      let entries: Dirent[];
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (!entry.isDirectory() || skippedFolders.has(entry.name)) continue;
        const child = join(folder, entry.name);
        if (lstatExists(join(child, '.git'))) found.push(child);
        next.push(child);
      }
    }
    level = next;
  }
  return found;
};

/*
 * The probes below run at every session's start, mostly on paths that do not exist (`.git/config` in a folder that is
 * no repository, `.git` in each folder of the nested-checkout walk). A missing path is asked with `throwIfNoEntry:
 * false`, which answers without building an exception (an ENOENT error with its stack cost ~20-40 µs each); any other
 * failure still throws and is handled as before.
 */
const lstatExists = (path: string): boolean => {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
};

/** The entries of a folder that are folders themselves (none when it cannot be read). */
const subfolders = (folder: string): string[] => {
  if (!lstatExists(folder)) return [];
  try {
    return readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(folder, entry.name));
  } catch {
    return [];
  }
};

/**
 * The repository configuration and hook locations of the workspace's git repository, canonical: what git reads and
 * runs on an ordinary `git status` in the user's own shell, an editor or a hook that is not sandboxed — a
 * `core.fsmonitor` the model wrote into `.git/config` would run there. For the workspace's `.git` (a folder, or a
 * `gitdir:` file whose git directory lies inside the workspace) and its `commondir`: `config`, `config.worktree`,
 * `hooks/`, `info/attributes`, and the same in each linked worktree (`worktrees/*`) and submodule (`modules/*`, two
 * levels) — and for every repository checked out inside the workspace (`nestedCheckouts`). They are protected for writing but stay readable (git inside the sandbox needs its configuration):
 * `gitReadablePaths` returns the same list.
 */
export const gitControlPaths = (root: string): string[] => {
  const gitDirs = new Set<string>();
  // The workspace's own repository, and every repository checked out inside it (a nested clone, a vendored project):
  // git reads each one's configuration the same way when someone runs it there.
  for (const checkout of [root, ...nestedCheckouts(root)]) {
    const dotGit = join(checkout, '.git');
    gitDirs.add(dotGit);
    const linked = gitDirOfFile(dotGit);
    if (linked !== undefined) gitDirs.add(canonicalPath(linked));
  }
  for (const gitDir of [...gitDirs]) {
    if (!lstatExists(join(gitDir, 'commondir'))) continue;
    try {
      const common = readFileSync(join(gitDir, 'commondir'), 'utf8').slice(0, 4096).trim();
      if (common !== '') gitDirs.add(canonicalPath(isAbsolute(common) ? common : resolve(gitDir, common)));
    } catch {
      // no commondir: an ordinary git directory
    }
  }
  const all = new Set<string>();
  const addDir = (gitDir: string, level: number): void => {
    if (!isInside(root, gitDir) || gitDir === root) return;
    for (const name of gitControlNames) all.add(canonicalPath(join(gitDir, name)));
    if (level >= 2) return;
    for (const worktree of subfolders(join(gitDir, 'worktrees'))) addDir(canonicalPath(worktree), level + 1);
    for (const module of subfolders(join(gitDir, 'modules'))) addDir(canonicalPath(module), level + 1);
  };
  for (const gitDir of gitDirs) addDir(gitDir, 0);
  return [...all];
};

/** The names of the project instruction files rein loads (docs/model-input.md: *Project instructions*): AGENTS.md, else CLAUDE.md. */
export const instructionFileNames: readonly string[] = ['AGENTS.md', 'CLAUDE.md'];

/** True for a file name that is a project instruction file (any case: an alias on a case-insensitive file system). */
export const isInstructionFileName = (name: string): boolean => instructionFileNames.some((known) => protectedKey(known) === protectedKey(name));

/** Folders the instruction scan does not enter: dot folders (`.git`, `.rein`) and installed dependencies. */
const unscannedFolder = (name: string): boolean => name.startsWith('.') || name === 'node_modules';

/**
 * The project instruction files of a workspace, canonical: `AGENTS.md` and `CLAUDE.md` at its root (whether or not
 * they exist: one a command creates there is removed again) and those that exist in its folders, found by a bounded
 * scan (6 levels, 2,000 folders; dot folders and `node_modules` skipped). They are protected for writing and stay
 * readable: the model reads them as instructions, so a model that could edit one could steer the next turn.
 */
export const instructionPaths = (root: string): string[] => {
  const found = new Set(instructionFileNames.map((name) => join(root, name)));
  let folders = 0;
  const visit = (folder: string, depth: number): void => {
    if (depth > 6 || folders >= 2_000) return;
    folders++;
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isFile() && isInstructionFileName(entry.name) && depth > 0) found.add(canonicalPath(join(folder, entry.name)));
      else if (entry.isDirectory() && !unscannedFolder(entry.name)) visit(join(folder, entry.name), depth + 1);
    }
  };
  visit(root, 0);
  return [...found].filter((path) => isInside(root, path));
};

/**
 * The canonical form of a path that may not exist yet: the real path of its nearest existing ancestor, with the
 * remaining components appended; a dangling symlink on the way is followed to where it points (so a link to a file
 * that does not exist yet is judged by its target). `path` must be absolute; `..` and `.` are removed lexically first
 * (tools open the normalised path, so this is the path that is checked and the one that is used).
 */
export const canonicalPath = (path: string, depth = 0): string => {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    // A path that does not exist (no entry, not a symlink) has neither a real path nor a link target: its parent is
    // next, asked without the two exceptions realpath and lstat would throw.
    if (!lstatExists(existing)) {
      const parent = dirname(existing);
      if (parent === existing) return resolve(path);
      rest.push(basename(existing));
      existing = parent;
      continue;
    }
    try {
      const real = realpathSync.native(existing);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const target = depth < 40 ? danglingTarget(existing) : undefined;
      if (target !== undefined) return canonicalPath(rest.length === 0 ? target : join(target, ...rest.reverse()), depth + 1);
      const parent = dirname(existing);
      if (parent === existing) return resolve(path);
      rest.push(basename(existing));
      existing = parent;
    }
  }
};

/** Where a symlink that cannot be resolved points, as an absolute path; undefined for anything else. */
const danglingTarget = (path: string): string | undefined => {
  try {
    if (!lstatSync(path).isSymbolicLink()) return undefined;
    return resolve(dirname(path), readlinkSync(path));
  } catch {
    return undefined;
  }
};

/** True when `candidate` is `root` or lies below it (both canonical). */
export const isInside = (root: string, candidate: string): boolean => candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * Protected paths compare case- and normalisation-insensitively, so an alias on a case-insensitive or
 * normalising file system (`REIN.CONFIG.JSON`, a decomposed `é`) is refused too.
 */
export const protectedKey = (path: string): string => path.normalize('NFC').toLowerCase();

/**
 * rein's per-user configuration folder: `$REIN_CONFIG_HOME`, else `$XDG_CONFIG_HOME/rein`, else `~/.config/rein` (an
 * empty variable counts as unset). It holds the chain key, the trust store and the user's plugins: what vouches for
 * the log and what decides, outside any sandbox, what rein runs next.
 */
export const reinConfigHome = (env: Record<string, string | undefined> = process.env): string => configHomeOf(env);

/**
 * The user's own folders and files that steer what rein runs or vouch for its logs, wherever the workspace is: rein's
 * configuration folder (the chain key, the trust store and the user plugins, which run outside the sandbox), the chain
 * key where `REIN_CHAIN_KEY_FILE` puts it, and the user skills folder (`~/.agents/skills`). When one lies inside a
 * workspace — a session run in the home directory — it is protected there like `.rein`.
 */
export const userProtectedPaths = (env: Record<string, string | undefined> = process.env): string[] => [reinConfigHome(env), ...(env.REIN_CHAIN_KEY_FILE ? [chainKeyPath(env)] : []), join(homedir(), '.agents', 'skills')];

/**
 * The canonical protected paths of a workspace: the entries above under its canonical root (and, for one that is a
 * symlink, where it leads inside the workspace), the user's folders of `userProtectedPaths` that lie inside it, plus
 * the repository's git configuration and hooks (`gitControlPaths`), the project instruction files (`instructionPaths`), plus
 * `extra` (the store directory when it lives elsewhere, entries a host adds), each resolved by real path even when it
 * does not exist yet — so a symlinked workspace or store path cannot hide them.
 */
export const protectedPathsOf = (workspaceRoot: string, extra: readonly string[] = []): string[] => workspacePathsOf(workspaceRoot, extra).protected;

/**
 * A workspace's protected paths (`protectedPathsOf`) and, among them, those that stay readable (the git configuration
 * and the instruction files): both from one walk of the workspace, where asking `protectedPathsOf`,
 * `gitControlPaths` and `instructionPaths` apart would walk it twice.
 */
export const workspacePathsOf = (workspaceRoot: string, extra: readonly string[] = []): { protected: string[]; readable: string[] } => {
  const root = canonicalPath(workspaceRoot);
  const user = userProtectedPaths().map((path) => canonicalPath(path)).filter((path) => path !== root && isInside(root, path));
  // Each entry by its name and by where it leads: a `.mcp.json` that links to `cfg/mcp.json` must not leave the file
  // the link reads (what the next run trusts and starts) writable.
  // (A link to the workspace itself or above it protects nothing more: it would otherwise close the whole workspace.)
  const leads = protectedWorkspaceEntries.map((entry) => canonicalPath(join(root, entry.path))).filter((path) => path !== root && isInside(root, path));
  const entries = [...protectedWorkspaceEntries.map((entry) => join(root, entry.path)), ...leads];
  const readable = [...gitControlPaths(root), ...instructionPaths(root)];
  const paths = [...entries, ...readable, ...user, ...extra.map((path) => canonicalPath(isAbsolute(path) ? path : resolve(root, path)))];
  return { protected: [...new Set(paths)], readable };
};

/**
 * A workspace that is rein's configuration folder or lies inside it (a user plugin's folder opened as the
 * workspace): the model could then rewrite the trust store or a user plugin that runs outside the sandbox. Returns
 * why, or undefined for any other workspace.
 */
export const workspaceInsideConfigHome = (workspaceRoot: string, env: Record<string, string | undefined> = process.env): string | undefined => {
  const root = canonicalPath(workspaceRoot);
  const home = canonicalPath(reinConfigHome(env));
  return isInside(home, root) ? `the workspace ${root} lies inside rein's configuration folder ${home} (trust store, user plugins): a session there could rewrite what rein runs outside the sandbox; run rein in another folder, or point REIN_CONFIG_HOME elsewhere` : undefined;
};
