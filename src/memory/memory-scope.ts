import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { readRegularFile } from '../util/read-regular-file.js';

/** `.git` pointers and `HEAD` are a line; anything larger (or not a regular file: a FIFO a command made) is ignored. */
const gitFileLimit = 64 * 1024;

const readGitFile = async (path: string): Promise<string> => (await readRegularFile(path, gitFileLimit))?.toString('utf8') ?? '';

/** The boundaries a session's memory is read and written in: its workspace, repository and branch. */
export interface MemoryScopeKeys {
  workspace: string;
  /** The repository's top-level directory (the workspace when it is not in a git repository). */
  repo: string;
  branch?: string;
  user?: string;
}

const gitDirectoryOf = async (start: string): Promise<{ top: string; git: string } | undefined> => {
  for (let directory = resolve(start); ; directory = dirname(directory)) {
    const candidate = join(directory, '.git');
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isDirectory()) return { top: directory, git: candidate };
    if (info?.isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(await readGitFile(candidate));
      if (pointer?.[1]) return { top: directory, git: resolve(directory, pointer[1].trim()) };
    }
    if (dirname(directory) === directory) return undefined;
  }
};

/**
 * Resolve the memory scope of a workspace: the repository is the nearest enclosing git working tree (else the
 * workspace itself), the branch the one `HEAD` names (none when detached or outside git). Reads files only, never blocking: a FIFO at `.git/HEAD` reads as no
 * branch.
 */
export const resolveMemoryScope = async (workspace: string, override: Partial<MemoryScopeKeys> = {}): Promise<MemoryScopeKeys> => {
  const git = await gitDirectoryOf(workspace);
  const head = git ? await readGitFile(join(git.git, 'HEAD')) : '';
  const branch = /^ref:\s*refs\/heads\/(.+)$/m.exec(head)?.[1]?.trim();
  const scope: MemoryScopeKeys = { workspace: resolve(workspace), repo: git?.top ?? resolve(workspace), ...(branch ? { branch } : {}) };
  return { ...scope, ...override };
};

/** The key of a scope level in these boundaries (`task` scopes use the session id). */
export const scopeKeyOf = (level: 'user' | 'workspace' | 'repo' | 'branch' | 'task', keys: MemoryScopeKeys, sessionId: string): string => {
  if (level === 'user') return keys.user ?? 'user';
  if (level === 'workspace') return keys.workspace;
  if (level === 'branch') return keys.branch ? `${keys.repo}#${keys.branch}` : keys.repo;
  if (level === 'task') return sessionId;
  return keys.repo;
};
