import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { GitConfigSyntaxError, gitConfigName, parseGitConfig } from './git-config-parse.js';
import { isInside } from './protected-paths.js';

/** Larger repository configuration files are not read: a command of such a repository is not read-only. */
const maxConfigBytes = 256 * 1024;

/**
 * Keys that make git run a program (or send a credential) on an ordinary command, by their last part: `core.fsmonitor`
 * runs on `status` and `diff`, a diff driver's `textconv` / `command` and `diff.external` on `diff`, `log -p`, `show`,
 * filter drivers (`clean`, `smudge`, `process`) on `status`, `gpg.program` on a signature check, a credential `helper`,
 * `core.sshCommand`, `remote.*.uploadpack`, `core.alternateRefsCommand`, any `*cmd` / `*command` / `*program`, and the
 * rest on the commands they name. Compared on the key git reads, after parsing (`parseGitConfig`), whatever its section.
 */
const runsProgram = /^(?:fsmonitor|pager|external|textconv|clean|smudge|process|driver|hookspath|sshcommand|gitproxy|askpass|editor|helper|uploadpack|receivepack|difffilter|browser|.*command|.*cmd|.*program|.*hook)$/;
/** Sections that read another file (`[include]`, `[includeIf "…"]`), rename commands (`[alias]`: `p = push` walks past a `git push*` deny rule; `x = !sh` runs a shell) or name a pager per command (`[pager]`). */
const runsSection = /^(?:include|includeif|alias|pager)$/;

/** The text of a regular file, without blocking on a FIFO; undefined when it is not a regular file or too large. */
const readRegular = (path: string): string | undefined => {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > maxConfigBytes) return undefined;
    const buffer = Buffer.alloc(info.size);
    const read = readSync(fd, buffer, 0, info.size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
};

/** What is wrong with one configuration file of a git directory (`config`, `config.worktree`), or undefined. */
const fileHazard = (path: string, shown: string): string | undefined => {
  try {
    lstatSync(path);
  } catch {
    return undefined;
  }
  const text = readRegular(path);
  if (text === undefined) return `${shown} is not a regular file git can be trusted to read`;
  let entries;
  try {
    entries = parseGitConfig(text);
  } catch (error) {
    if (error instanceof GitConfigSyntaxError) return `${shown} cannot be read as git reads it (${error.message}), so what it makes git run is unknown`;
    throw error;
  }
  for (const entry of entries) {
    if (runsSection.test(entry.section)) return `${shown} has an [${entry.section}] section (line ${entry.line}): it reads another configuration file, renames commands or runs a pager`;
    if (runsProgram.test(entry.key)) return `${shown} sets \`${gitConfigName(entry)}\` (line ${entry.line}), which makes git run a program`;
  }
  return undefined;
};

/**
 * What is wrong with one git directory's configuration, or undefined when it runs nothing: its `config` and its
 * `config.worktree` (read when `extensions.worktreeConfig` is set; read here whenever it exists).
 */
const configHazard = (gitDir: string, shown: string): string | undefined =>
  fileHazard(join(gitDir, 'config'), `${shown}/config`) ?? fileHazard(join(gitDir, 'config.worktree'), `${shown}/config.worktree`);

/**
 * Why a git command run from `cwd` would read a repository configuration that the workspace holds (so the model
 * may have written it) and that can make git run a program — `git status` with `core.fsmonitor` set in
 * `.git/config` runs that program — or undefined when it cannot. Only the nearest `.git` between `cwd` and the
 * workspace root counts; a repository above the workspace is the user's own. A `.git` file (a worktree, a
 * submodule) is followed to its git directory when that lies inside the workspace too.
 */
export const gitConfigHazard = (cwd: string, workspace: string): string | undefined => {
  for (let dir = cwd; isInside(workspace, dir); dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    let info;
    try {
      info = lstatSync(dotGit);
    } catch {
      if (dir === workspace || dirname(dir) === dir) return undefined;
      continue;
    }
    const shown = dir === workspace ? '.git' : `${dir.slice(workspace.length + 1)}/.git`;
    if (info.isDirectory()) return configHazard(dotGit, shown);
    if (info.isSymbolicLink()) return `${shown} is a symbolic link`;
    const text = readRegular(dotGit);
    const target = text === undefined ? undefined : /^gitdir:\s*(.+)$/m.exec(text)?.[1]?.trim();
    if (target === undefined) return `${shown} is neither a directory nor a gitdir file`;
    const gitDir = isAbsolute(target) ? target : resolve(dir, target);
    if (!isInside(workspace, gitDir)) return undefined;
    const own = configHazard(gitDir, shown);
    if (own) return own;
    const common = readRegular(join(gitDir, 'commondir'))?.trim();
    const commonDir = common === undefined ? undefined : isAbsolute(common) ? common : resolve(gitDir, common);
    return commonDir !== undefined && isInside(workspace, commonDir) ? configHazard(commonDir, shown) : undefined;
  }
  return undefined;
};

/**
 * Whether a configuration key given on git's command line (`git -c core.pager=… log`, `--config-env alias.p=VAR`)
 * makes git run a program, read another file or rename a command, judged as in a configuration file.
 */
export const gitKeyRunsProgram = (key: string): boolean => {
  const parts = key.toLowerCase().split('.');
  return parts.length < 2 || runsSection.test(parts[0]!) || runsProgram.test(parts.at(-1)!);
};

/** Environment variables that point git at another repository, configuration, program or pager. */
export const steersGit = (name: string): boolean => name.startsWith('GIT_');
