import { execFile } from 'node:child_process';
import { gitConfigHazard } from '../policy/git-config-hazard.js';
import { lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { release, type as osType } from 'node:os';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';

/** What the environment block is built from (each part is injected: tests give fixed values). */
export interface EnvironmentFacts {
  workspace: string;
  /** The session's start, ms since the epoch: the block names its date (UTC), never a time that moves. */
  now: number;
  os: string;
  shell: string;
  sandbox: string;
  network: string;
  git?: { branch: string; clean: boolean; changed: number; commits: readonly string[] };
  /** The workspace's top-level entries (directories end with `/`), sorted, at most `maxEntries`. */
  entries: readonly string[];
  /** How many top-level entries there are in all (more than `entries` when the listing was capped). */
  total: number;
}

/** Options of the environment block (`ReinOptions.environment`). */
export interface EnvironmentOptions {
  /** Top-level entries listed (default 40); the rest are counted. */
  maxEntries?: number;
  /** Commit subjects shown for a git repository (default 5). */
  commits?: number;
}

const run = (command: string, args: readonly string[], cwd: string): Promise<string | undefined> =>
  new Promise((resolve) => {
    execFile(command, [...args], { cwd, timeout: 3_000, maxBuffer: 256 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' } }, (error, stdout) => resolve(error ? undefined : stdout));
  });

/**
 * git's own options for every call: a repository configuration the workspace holds may name a program for git to run
 * (`core.fsmonitor` runs on `git status`); these calls run on the host, so that one is switched off on the command
 * line, which wins over any file.
 */
const safeGit = ['-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false'];

/**
 * True when git could find a repository for `root`: a `.git` in it or in a directory above it, or `GIT_DIR` set. When
 * none can, git is not started (a process per session start, ~25 ms of a worker's CPU, to learn there is none).
 */
const mayBeRepository = (root: string): boolean => {
  if (process.env.GIT_DIR !== undefined) return true;
  for (let dir = root; ; dir = dirname(dir)) {
    try {
      lstatSync(join(dir, '.git'));
      return true;
    } catch {
      if (dirname(dir) === dir) return false;
    }
  }
};

/**
 * The repository's branch, state and last commit subjects; undefined when the workspace is not a git work tree, or
 * when its configuration could make git run a program (the model may have written it: git is then not run at all).
 */
export const gitFacts = async (root: string, commits = 5): Promise<EnvironmentFacts['git']> => {
  if (!mayBeRepository(root) || gitConfigHazard(root, root) !== undefined) return undefined;
  const inside = await run('git', [...safeGit, 'rev-parse', '--is-inside-work-tree'], root);
  if (inside?.trim() !== 'true') return undefined;
  const [branch, status, log] = await Promise.all([
    run('git', [...safeGit, 'rev-parse', '--abbrev-ref', 'HEAD'], root),
    run('git', [...safeGit, 'status', '--porcelain', '--untracked-files=normal'], root),
    run('git', [...safeGit, 'log', `-${commits}`, '--format=%s'], root),
  ]);
  const changed = (status ?? '').split('\n').filter((line) => line.trim().length > 0).length;
  return {
    branch: branch?.trim() || '(unknown)',
    clean: status !== undefined && changed === 0,
    changed,
    commits: (log ?? '').split('\n').map((line) => line.trim()).filter((line) => line.length > 0).slice(0, commits),
  };
};

/** Capture the facts of the machine and workspace the session starts in (git and a directory listing: real I/O). */
export const captureEnvironment = async (input: { root: string; now: number; sandbox: SandboxPolicy; sandboxActive?: boolean }, options: EnvironmentOptions = {}): Promise<EnvironmentFacts> => {
  const maxEntries = options.maxEntries ?? 40;
  const dirents = await readdir(input.root, { withFileTypes: true }).catch(() => []);
  const names = dirents
    .filter((entry) => entry.name !== '.git')
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort((left, right) => left.localeCompare(right));
  const git = await gitFacts(input.root, options.commits ?? 5);
  const sandbox = input.sandbox.mode === 'off' ? 'off (commands run on the host)' : input.sandboxActive === false ? `${input.sandbox.mode}, unavailable on this machine (commands run on the host)` : `${input.sandbox.mode} (bubblewrap)`;
  return {
    workspace: input.root,
    now: input.now,
    os: `${osType()} ${release()} (${process.platform}/${process.arch})`,
    shell: 'bash',
    sandbox,
    network: input.sandbox.network === 'disabled' ? 'off for commands' : input.sandbox.network === 'allow-list' ? `allow-list (${input.sandbox.allowedHosts.join(', ') || 'no hosts'})` : 'on for commands',
    ...(git ? { git } : {}),
    entries: names.slice(0, maxEntries),
    total: names.length,
  };
};

/**
 * The environment block's text: one fact a line, the date without a time (so the block stays the same all day and
 * across resumes), the git state when the workspace is a repository, and a capped listing. Deterministic in its facts.
 */
export const renderEnvironment = (facts: EnvironmentFacts): string => {
  const lines = [
    `Workspace: ${facts.workspace}`,
    `Today's date: ${new Date(facts.now).toISOString().slice(0, 10)} (UTC)`,
    `OS: ${facts.os}`,
    `Shell: ${facts.shell}`,
    `Sandbox: ${facts.sandbox}`,
    `Network: ${facts.network}`,
  ];
  if (facts.git) {
    lines.push(`Git: branch ${facts.git.branch}, ${facts.git.clean ? 'clean' : `${facts.git.changed} changed or untracked paths`}`);
    if (facts.git.commits.length > 0) lines.push('Recent commits:', ...facts.git.commits.map((subject) => `- ${subject.length > 120 ? `${subject.slice(0, 117)}...` : subject}`));
  } else lines.push('Git: not a git repository');
  const more = facts.total - facts.entries.length;
  lines.push(`Top-level entries (${facts.total}${more > 0 ? `, first ${facts.entries.length} shown` : ''}): ${facts.entries.join(' ') || '(empty)'}${more > 0 ? ` … and ${more} more` : ''}`);
  return lines.join('\n');
};
