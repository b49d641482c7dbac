import type { ShellClass } from '../../models/permission.records.js';
import { parseShell, type ShellSegment } from './shell-parse.js';
import { changeDirectory, initialScope, judgeWord, quietTargets, type PathScope } from './shell-paths.js';
import { gitReadOnlyEffect, readOnlyOptionEffect, type Effect } from './shell-side-effects.js';
import { gitConfigHazard, steersGit } from './git-config-hazard.js';

/** Classes that no mode default and no wildcard rule may allow: only an exact rule, a session grant or a person. */
export const neverAutoAllowed: ReadonlySet<ShellClass> = new Set(['delete', 'network', 'install', 'outside-workspace', 'protected-path', 'chained', 'unparseable', 'privileged']);

/** A classified command: its classes (sorted), the simple commands it is made of, and why it was unparseable. */
export interface ShellClassification {
  classes: ShellClass[];
  parts: string[];
  reason?: string;
  /** Words that name a path outside the workspace, a protected path or a hard-linked file (at most 20). */
  outsidePaths?: string[];
  /**
   * Per part (aligned with `parts`): the classes of that simple command alone, judged where the line runs it (after
   * the `cd`s and assignments before it), and its text as a rule sees it — its words and the redirections that write
   * (`npm test > out.txt`). A judgement part by part (`judgeParts`) reads these.
   */
  segments?: Array<{ text: string; classes: ShellClass[] }>;
}

/** Where a command line runs: the canonical workspace and working directory, and the canonical protected paths. */
export interface ClassifyOptions {
  workspace: string;
  cwd: string;
  protectedPaths?: readonly string[];
  /** What `~` and `$HOME` mean (default: this process's `HOME`). */
  home?: string;
}

const readOnlyCommands = new Set([
  'ls', 'pwd', 'cat', 'head', 'tail', 'wc', 'echo', 'printf', 'grep', 'egrep', 'fgrep', 'rg', 'tree', 'stat', 'file', 'du', 'df',
  'which', 'whereis', 'type', 'date', 'whoami', 'id', 'uname', 'printenv', 'true', 'false', 'test', '[', 'diff', 'cmp', 'uniq',
  'cut', 'tr', 'basename', 'dirname', 'realpath', 'readlink', 'md5sum', 'sha1sum', 'sha256sum', 'b3sum', 'jq', 'nl', 'column', 'comm',
  'seq', 'hostname', 'less', 'more', 'od', 'hexdump', 'xxd', 'strings', 'cd',
]);
const gitReadOnly = new Set(['status', 'diff', 'log', 'show', 'rev-parse', 'ls-files', 'blame', 'describe', 'shortlog', 'grep', 'cat-file', 'ls-tree', 'reflog', 'whatchanged']);
/** Git options before the verb that change nothing about what runs or where (`git --no-pager log`). */
const harmlessGitGlobals = new Set(['--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs', '--no-replace-objects', '--bare']);
const gitNetwork = new Set(['push', 'pull', 'fetch', 'clone', 'ls-remote', 'submodule', 'remote', 'send-pack', 'http-push', 'fetch-pack']);
const deleteCommands = new Set(['rm', 'rmdir', 'unlink', 'shred', 'truncate', 'srm', 'wipe']);
const writeCommands = new Set(['touch', 'mkdir', 'cp', 'mv', 'tee', 'chmod', 'chown', 'chgrp', 'ln', 'install', 'dd', 'patch', 'tar', 'unzip', 'zip', 'gzip', 'gunzip']);
const networkCommands = new Set(['curl', 'wget', 'ssh', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'netcat', 'telnet', 'ftp', 'ping', 'dig', 'nslookup', 'host', 'http', 'https', 'socat', 'aria2c']);
const privilegedCommands = new Set(['sudo', 'su', 'doas', 'pkexec', 'chroot', 'mount', 'umount', 'systemctl', 'shutdown', 'reboot', 'kill', 'killall', 'pkill']);
const hiddenCommands = new Set(['eval', 'exec', 'source', '.', 'bash', 'sh', 'zsh', 'dash', 'ksh', 'fish']);
const wrappers = new Set(['env', 'nice', 'nohup', 'time', 'timeout', 'command', 'stdbuf', 'ionice']);
const packageManagers = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const installVerbs = new Set(['install', 'i', 'ci', 'add', 'update', 'upgrade', 'up', 'dlx', 'exec', 'x', 'create', 'init']);

/** Drop leading assignments and wrapper commands (`env A=1`, `timeout 5`, `nice -n 5`) to reach the real command. */
const unwrap = (words: readonly string[]): string[] => {
  let rest = [...words];
  for (;;) {
    while (rest.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0]!)) rest = rest.slice(1);
    const first = rest[0];
    if (first === undefined || !wrappers.has(first)) return rest;
    rest = rest.slice(1);
    while (rest.length > 0 && (rest[0]!.startsWith('-') || /^\d+(\.\d+)?[smhd]?$/.test(rest[0]!))) rest = rest.slice(1);
  }
};

const baseName = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/** The options of an argument list up to `--`: the letters of short clusters (`-Rn`) and the long names (`--follow`). */
const optionsOf = (args: readonly string[]): { short: Set<string>; long: string[] } => {
  const short = new Set<string>();
  const long: string[] = [];
  for (const arg of args) {
    if (arg === '--') break;
    if (arg.startsWith('--')) long.push(arg.slice(2).split('=')[0]!);
    else if (arg.startsWith('-') && arg.length > 1) for (const letter of arg.slice(1)) short.add(letter);
  }
  return { short, long };
};

/** Whether a long option was given, under any abbreviation getopt accepts (`--deref` for `--dereference-recursive`). */
const hasLong = (long: readonly string[], name: string): boolean => long.some((given) => given.length >= 2 && name.startsWith(given));

/**
 * The option that makes a command read (or copy, or change) what the symbolic links under its arguments lead to as it
 * walks a tree: `grep -R`, `rg -L`/`--follow`, `find -L`/`-follow`, `du -L`, `ls -RL`, `tree -l`, `cp -rL`, `tar -h`,
 * `zip -r` (without `-y`), `diff -r` (without `--no-dereference`), `chown -RL`. Such a walk leaves the workspace
 * through any link in it that leads out — which the classifier cannot see in the words — so the line is judged
 * `outside-workspace`. Links named on the command line are judged by real path like every other word; `grep -r`,
 * `find .`, `du`, `ls -R` and `rg` do not follow the links they meet and stay as they are.
 */
const linkFollowingOption = (command: string, args: readonly string[]): string | undefined => {
  const { short, long } = optionsOf(args);
  const recursive = short.has('r') || short.has('R') || hasLong(long, 'recursive');
  switch (command) {
    case 'grep':
    case 'egrep':
    case 'fgrep':
      return short.has('R') ? '-R' : hasLong(long, 'dereference-recursive') ? '--dereference-recursive' : undefined;
    case 'rg':
      return short.has('L') ? '-L' : hasLong(long, 'follow') ? '--follow' : undefined;
    case 'find': {
      // Up to an `-exec`: the command it runs is judged on its own (`-L` means something else to `grep`).
      const exec = args.findIndex((arg) => arg === '-exec' || arg === '-execdir' || arg === '-ok' || arg === '-okdir');
      return (exec === -1 ? args : args.slice(0, exec)).find((arg) => arg === '-L' || arg === '-follow');
    }
    case 'du':
      return short.has('L') ? '-L' : hasLong(long, 'dereference') ? '--dereference' : undefined;
    case 'ls':
      return (short.has('L') || hasLong(long, 'dereference')) && (short.has('R') || hasLong(long, 'recursive')) ? '-R with -L' : undefined;
    case 'tree':
      return short.has('l') ? '-l' : undefined;
    case 'cp':
      return (short.has('L') || hasLong(long, 'dereference')) && (recursive || short.has('a') || hasLong(long, 'archive')) ? '-r with -L' : undefined;
    case 'tar': {
      // Old-style bundled options (`tar czhf out.tgz .`) are a first word without a dash.
      const bundled = args[0] !== undefined && /^[A-Za-z]+$/.test(args[0]) && !args[0].startsWith('-') ? args[0] : '';
      return short.has('h') || bundled.includes('h') ? '-h' : hasLong(long, 'dereference') ? '--dereference' : undefined;
    }
    case 'zip':
      return recursive && !short.has('y') && !hasLong(long, 'symlinks') ? '-r (without -y)' : undefined;
    case 'diff':
      return recursive && !hasLong(long, 'no-dereference') ? '-r' : undefined;
    case 'chown':
    case 'chgrp':
      return recursive && short.has('L') ? '-R with -L' : undefined;
    default:
      return undefined;
  }
};

const commandClasses = (words: readonly string[], classes: Set<ShellClass>, follows: string[] = []): boolean => {
  const real = unwrap(words);
  const command = real[0] === undefined ? '' : baseName(real[0]);
  const args = real.slice(1);
  if (command === '') return true;
  const following = linkFollowingOption(command, args);
  if (following !== undefined) {
    classes.add('outside-workspace');
    follows.push(`${command} ${following} (follows symbolic links)`);
  }
  if (privilegedCommands.has(command)) {
    classes.add('privileged');
    if (command === 'sudo' || command === 'doas') commandClasses(args.filter((arg, index) => index > 0 || !arg.startsWith('-')), classes, follows);
    return false;
  }
  if (hiddenCommands.has(command)) {
    if (args.length > 0 && (command === 'eval' || args.includes('-c') || command === 'exec')) classes.add('unparseable');
    return false;
  }
  if (command === 'xargs') {
    const inner = args.filter((arg) => !arg.startsWith('-'));
    if (inner.length > 0) commandClasses(inner, classes, follows);
    return false;
  }
  if (deleteCommands.has(command)) return classes.add('delete'), false;
  if (networkCommands.has(command)) return classes.add('network'), false;
  if (writeCommands.has(command)) return classes.add('write'), false;
  if (command === 'find') {
    if (args.includes('-delete')) classes.add('delete');
    const exec = args.findIndex((arg) => arg === '-exec' || arg === '-execdir' || arg === '-ok' || arg === '-okdir');
    if (exec !== -1) commandClasses(args.slice(exec + 1).filter((arg) => arg !== ';' && arg !== '+' && arg !== '{}'), classes, follows);
    if (args.some((arg) => arg.startsWith('-fprint') || arg === '-fls')) classes.add('write');
    return exec === -1 && !args.includes('-delete');
  }
  if (command === 'sed') {
    if (args.some((arg) => arg === '-i' || arg.startsWith('-i') || arg.startsWith('--in-place'))) return classes.add('write'), false;
    return provenReadOnly(readOnlyOptionEffect(words, command, args), classes);
  }
  if (command === 'git') {
    const verbAt = args.findIndex((arg) => !arg.startsWith('-'));
    const verb = verbAt === -1 ? '' : args[verbAt]!;
    // Options before the verb are git's own: `-c`/`--config-env` set any configuration (`core.fsmonitor=<program>`
    // runs it on `git status`), `--exec-path`, `--git-dir`, `-C` change what runs where. Only those that cannot are
    // allowed in front of a read-only verb; anything else makes the line not read-only.
    const globals = verbAt === -1 ? args : args.slice(0, verbAt);
    if (globals.some((arg) => !harmlessGitGlobals.has(arg))) {
      if (verb === 'clean' || (verb === 'reset' && args.includes('--hard'))) classes.add('delete');
      else if (gitNetwork.has(verb)) classes.add('network');
      return false;
    }
    if (verb === 'clean' || (verb === 'reset' && args.includes('--hard'))) return classes.add('delete'), false;
    if (gitNetwork.has(verb)) return classes.add('network'), false;
    if (gitReadOnly.has(verb)) return provenReadOnly(gitReadOnlyEffect(verb, args) ?? readOnlyOptionEffect(words, command, args), classes);
    if ((verb === 'branch' || verb === 'tag' || verb === 'stash') && args.length === 1) return true;
    if (verb === 'branch' && args.slice(1).every((arg) => ['-a', '-r', '-v', '-vv', '--list', '--all', '--show-current'].includes(arg))) return true;
    return false;
  }
  if (packageManagers.has(command)) {
    const verb = args.find((arg) => !arg.startsWith('-')) ?? (command === 'yarn' ? 'install' : '');
    if (installVerbs.has(verb)) classes.add('install');
    if (verb === 'publish' || verb === 'login' || verb === 'adduser') classes.add('network');
    if (verb === 'uninstall' || verb === 'remove' || verb === 'rm' || verb === 'prune') classes.add('delete');
    return args.length === 1 && (args[0] === '--version' || args[0] === '-v');
  }
  if (command === 'npx' || command === 'bunx' || command === 'pipx' || command === 'uvx') return classes.add('install'), false;
  if (['pip', 'pip3', 'gem', 'cargo', 'go', 'apt', 'apt-get', 'brew', 'dnf', 'yum', 'apk', 'pacman', 'conda', 'uv', 'poetry', 'composer'].includes(command)) {
    const verb = args.find((arg) => !arg.startsWith('-')) ?? '';
    if (['install', 'add', 'get', 'update', 'upgrade', 'sync'].includes(verb)) classes.add('install');
    if (['remove', 'uninstall', 'purge', 'autoremove'].includes(verb)) classes.add('delete');
    if (verb === 'publish') classes.add('network');
    return false;
  }
  return (readOnlyCommands.has(command) || command === 'sort') && provenReadOnly(readOnlyOptionEffect(words, command, args), classes);
};

/** True when nothing beyond reading was found; otherwise adds the class the finding carries (if any). */
const provenReadOnly = (effect: Effect | undefined, classes: Set<ShellClass>): boolean => {
  if (effect === undefined) return true;
  if (effect.shellClass) classes.add(effect.shellClass);
  return false;
};

/** Words of a segment that may be paths: its arguments (and the values of `--flag=value`) and its redirection targets. */
const pathWords = (segment: ShellSegment): string[] => {
  const [, ...args] = unwrap(segment.words);
  return [...args.flatMap((arg) => (arg.includes('=') && !arg.startsWith('=') ? [arg, arg.slice(arg.indexOf('=') + 1)] : [arg])), ...segment.redirects.map((redirect) => redirect.target)];
};

const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const declarations = new Set(['export', 'declare', 'local', 'readonly', 'typeset']);

/** Remember what a segment assigns (`A=x`, `export A=x`) so later words that use `$A` are judged by its value. */
const learnAssignments = (segment: ShellSegment, scope: PathScope): void => {
  const words = declarations.has(segment.words[0] ?? '') ? segment.words.slice(1) : segment.words.every((word) => assignment.test(word)) ? segment.words : [];
  for (const word of words) {
    const match = assignment.exec(word);
    if (match) scope.variables.set(match[1]!, match[2]!);
  }
};

/**
 * Classify a shell command for the permission stage. Every simple command is judged and the line takes the
 * union of their classes; `read-only` is kept only when every part is read-only and nothing writes. Every word that
 * could be a path is expanded as far as the classifier can see (`~`, `$HOME`, variables the line assigns, globs),
 * resolved from the working directory (which follows `cd`) and compared by real path: a path outside the workspace
 * (a symlink made before the run included) is `outside-workspace`, a protected path `protected-path`, a file with
 * several hard links or a FIFO, socket or device `outside-workspace` too, and so is a walk that follows the links it
 * meets (`grep -R`, `find -L`, …; see `linkFollowingOption`). A line that cannot be parsed is `unparseable` and nothing else.
 */
export const classifyShellCommand = (command: string, options: ClassifyOptions): ShellClassification => {
  const parsed = parseShell(command);
  if (!parsed.ok) return { classes: ['unparseable'], parts: [command.trim()], reason: parsed.reason };
  const classes = new Set<ShellClass>();
  const scope = initialScope(options);
  const outsidePaths: string[] = [];
  /** The classes of the simple command being judged; the line takes their union. */
  let own = new Set<ShellClass>();
  const flag = (word: string, shellClass: ShellClass) => {
    own.add(shellClass);
    if (outsidePaths.length < 20 && !outsidePaths.includes(word)) outsidePaths.push(word);
  };
  let readOnly = true;
  const segments: Array<{ text: string; classes: ShellClass[] }> = [];
  for (const segment of parsed.segments) {
    const follows: string[] = [];
    own = new Set<ShellClass>();
    const writes: string[] = [];
    let partReadOnly = commandClasses(segment.words, own, follows);
    for (const option of follows) flag(option, 'outside-workspace');
    for (const redirect of segment.redirects) {
      if (redirect.operator.includes('>') && !quietTargets.has(redirect.target) && !/^&?\d+$/.test(redirect.target)) {
        own.add('write');
        writes.push(`${redirect.operator} ${redirect.target}`);
        partReadOnly = false;
      }
    }
    learnAssignments(segment, scope);
    for (const word of pathWords(segment)) {
      const verdict = judgeWord(word, scope);
      if (verdict === 'outside' || verdict === 'hard-link' || verdict === 'special') flag(word, 'outside-workspace');
      else if (verdict === 'protected') flag(word, 'protected-path');
    }
    const words = unwrap(segment.words);
    if (words[0] !== undefined && words[0].slice(words[0].lastIndexOf('/') + 1) === 'git') {
      // The repository's own configuration is a workspace file the model can write: `core.fsmonitor` there turns a
      // read-only `git status` into any program, so such a git command is never read-only (nor is one a GIT_*
      // variable points at another repository or configuration).
      const steered = segment.words.some((word) => /^GIT_[A-Za-z0-9_]*=/.test(word)) || [...scope.variables.keys()].some(steersGit);
      if (steered || gitConfigHazard(scope.cwd, options.workspace) !== undefined) {
        flag('.git/config', 'protected-path');
        partReadOnly = false;
      }
    }
    if (words[0] === 'cd') {
      const target = changeDirectory(words[1], scope);
      if (words[1] === undefined || words[1] === '~') flag(words[1] ?? 'cd', 'outside-workspace');
      scope.variables.set('OLDPWD', scope.cwd);
      scope.cwd = target;
      scope.variables.set('PWD', target);
    } else if (words[0] !== undefined && scope.cwd !== options.workspace && judgeWord('.', scope) === 'outside') {
      // A command run after `cd` left the workspace works outside it, whatever its arguments.
      flag('.', 'outside-workspace');
    }
    for (const shellClass of own) classes.add(shellClass);
    if (!partReadOnly) readOnly = false;
    segments.push({ text: [...segment.words, ...writes].join(' '), classes: partReadOnly && own.size === 0 ? ['read-only'] : [...own].sort() });
  }
  if (parsed.segments.length > 1) classes.add('chained');
  if (readOnly && classes.size === 0) classes.add('read-only');
  if (readOnly && classes.has('chained')) classes.add('read-only');
  return { classes: [...classes].sort(), parts: parsed.segments.map((segment) => segment.words.join(' ')), ...(outsidePaths.length > 0 ? { outsidePaths } : {}), segments };
};
