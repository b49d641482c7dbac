import { hasWildcard, patternLiteral } from './permission-rules.js';
import { parseShell } from './shell-parse.js';

/**
 * The commands a shell line runs, as deny rules need to see them. A deny rule on `bash` names a program and its
 * arguments (`deny bash:git push*`); a line can run that program under many spellings: a path (`/usr/bin/git push`),
 * behind a wrapper (`command`, `env A=1`, `nice -n 5`, `time`, `exec`, `nohup`, `timeout 5`, `xargs`, `sudo`, …),
 * inside a subshell or group (`(git push)`, `{ git push; }`), a `bash -c` / `sh -c` string, `eval`, a command
 * substitution, `find -exec`, after git's own options (`git -C . push`), or through a variable the line assigns
 * (`x=git; $x push`). Each is normalised to `program args…` (the program by its base name); behind a wrapper every
 * later word is tried as the program, since the wrapper's options are not all known.
 */
export interface CommandsRun {
  /** Every normalised simple command the line may run (`git push origin main`). */
  commands: string[];
  /** Programs (base names) run with an argument the line does not spell out (`git $verb`, `rm {a,b}`). */
  dynamic: string[];
  /** Why the line hides a program it runs (`$x push` with `x` unknown, `eval "$CMD"`, `bash` reading stdin), if it does. */
  hidden?: string;
}

const keywords = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!', 'time', 'coproc', 'function', 'esac', '{', '}']);
/** Programs that run the command their arguments name. */
const wrappers = new Set([
  'command', 'builtin', 'exec', 'env', 'nice', 'nohup', 'time', 'timeout', 'stdbuf', 'ionice', 'setsid', 'sudo', 'doas', 'xargs', 'chrt',
  'taskset', 'unbuffer', 'flock', 'nsenter', 'unshare', 'chroot', 'runuser', 'su', 'strace', 'ltrace', 'watch', 'caffeinate', 'firejail',
  'proxychains', 'proxychains4', 'torsocks', 'catchsegv', 'valgrind', 'fakeroot', 'faketime', 'parallel', 'busybox', 'script', 'systemd-run',
]);
const shells = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'rbash']);
const declarations = new Set(['export', 'declare', 'local', 'readonly', 'typeset']);
const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** Git plumbing commands and the porcelain verb whose work they do. */
const gitPlumbing: Readonly<Record<string, string>> = { 'send-pack': 'push', 'http-push': 'push', 'fetch-pack': 'fetch' };

const gitValued = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds']);
const maxDepth = 6;

const baseName = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/** Substitute `$name` and `${name}` for the variables the line assigned; others stay as written. */
const expand = (word: string, variables: ReadonlyMap<string, string>): string =>
  word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced?: string, plain?: string) => variables.get((braced ?? plain)!) ?? whole);

/** Whether a word is not what the command receives: an expansion, a glob in the program's name, a brace list. */
const unresolved = (word: string): boolean => word.includes('$') || /\{[^}]*(,|\.\.)[^}]*\}/.test(word);

/** All commands the line runs (see `CommandsRun`). */
export const commandsRun = (line: string, depth = 0): CommandsRun => {
  const found: CommandsRun = { commands: [], dynamic: [] };
  collect(line, depth, found);
  return { commands: [...new Set(found.commands)], dynamic: [...new Set(found.dynamic)], ...(found.hidden ? { hidden: found.hidden } : {}) };
};

const collect = (line: string, depth: number, found: CommandsRun): void => {
  if (depth > maxDepth) {
    found.hidden ??= 'commands nested too deeply to read';
    return;
  }
  const substitutions: string[] = [];
  const parsed = parseShell(line, { groups: true, substitutions });
  if (!parsed.ok) {
    found.hidden ??= parsed.reason;
    return;
  }
  for (const body of substitutions) collect(body, depth + 1, found);
  const variables = new Map<string, string>();
  for (const segment of parsed.segments) {
    const words = segment.words;
    const assigned = declarations.has(words[0] ?? '') ? words.slice(1) : words.every((word) => assignment.test(word)) ? words : [];
    for (const word of assigned) {
      const match = assignment.exec(word);
      if (match) variables.set(match[1]!, expand(match[2]!, variables));
    }
    if (words[0] === 'alias') found.hidden ??= 'an alias defined on the line';
    if (words[0] === 'for' || words[0] === 'select' || words[0] === 'case' || words[0] === 'in') continue;
    normalise(words, 0, variables, depth, found, new Set());
  }
};

/** Record the command that starts at `from` (after keywords and assignments), and what it runs in turn. */
const normalise = (words: readonly string[], from: number, variables: ReadonlyMap<string, string>, depth: number, found: CommandsRun, seen: Set<number>): void => {
  if (seen.has(from)) return;
  seen.add(from);
  let at = from;
  while (at < words.length && (keywords.has(words[at]!) || assignment.test(words[at]!))) at++;
  if (at >= words.length) return;
  const written = expand(words[at]!, variables);
  if (unresolved(written) || /[*?[]/.test(written)) {
    found.hidden ??= `the program ${JSON.stringify(words[at])} is not a literal word`;
    return;
  }
  const program = baseName(written);
  const raw = words.slice(at + 1);
  const args = raw.map((word) => expand(word, variables));
  // A command line held in an argument (`bash -c '…'`, `eval`, `su -c`) is read as written and as expanded: the parser
  // does not keep quotes, so `x=bash; $x -c 'x=git; $x push'` must not see the inner `$x` as the outer one only.
  const nested = (index: number): void => {
    collect(raw[index]!, depth + 1, found);
    if (args[index] !== raw[index]) collect(args[index]!, depth + 1, found);
  };
  found.commands.push([program, ...args].join(' '));
  if (args.some(unresolved)) found.dynamic.push(program);
  const later = (start: number) => {
    for (let next = start; next < words.length; next++) normalise(words, next, variables, depth, found, seen);
  };
  if (program === 'xargs' || program === 'parallel') {
    // The command gets arguments from its input: an argument the line does not spell out.
    const extended = [...words, '$INPUT'];
    const seenExtended = new Set<number>();
    for (let next = at + 1; next < words.length; next++) normalise(extended, next, variables, depth, found, seenExtended);
    return;
  }
  if (wrappers.has(program)) {
    later(at + 1);
    // `env -S 'git push'`, `su -c 'rm f'`, `watch 'git push'`, `flock f -c '…'`: an argument holding a command line.
    args.forEach((arg, index) => /\s/.test(arg) && nested(index));
    return;
  }
  if (shells.has(program)) {
    const script = args.findIndex((arg) => /^-[A-Za-z]*c[A-Za-z]*$/.test(arg));
    if (script !== -1) {
      if (args[script + 1] === undefined) found.hidden ??= `${program} -c without a command`;
      else nested(script + 1);
    } else if (!args.some((arg) => !arg.startsWith('-') && !arg.startsWith('+'))) found.hidden ??= `${program} reading its commands from its input`;
    return;
  }
  if (program === 'eval') {
    collect(raw.join(' '), depth + 1, found);
    if (args.join(' ') !== raw.join(' ')) collect(args.join(' '), depth + 1, found);
    return;
  }
  if (program === 'find') {
    const exec = args.findIndex((arg) => ['-exec', '-execdir', '-ok', '-okdir'].includes(arg));
    if (exec !== -1) later(at + 2 + exec);
    return;
  }
  if (program === 'git') {
    let verb = 0;
    while (verb < args.length && args[verb]!.startsWith('-')) verb += gitValued.has(args[verb]!) ? 2 : 1;
    // `-c alias.p=push`, `--config-env alias.p=VAR`, and the joined spellings `--config-env=alias.p=VAR`, `-calias.p=push`.
    if (args.some((arg, index) => ((args[index - 1] === '-c' || args[index - 1] === '--config-env') && /^alias\./i.test(arg)) || /^(?:--config-env=|-c)alias\./i.test(arg))) found.hidden ??= 'a git alias defined on the line';
    if (verb > 0 && verb < args.length) found.commands.push(['git', ...args.slice(verb)].join(' '));
    // The plumbing a porcelain verb runs does the same (`git send-pack` pushes): a rule on the verb covers it.
    const porcelain = args[verb] === undefined ? undefined : gitPlumbing[args[verb]!];
    if (porcelain) found.commands.push(['git', porcelain, ...args.slice(verb + 1)].join(' '));
  }
};

/**
 * Whether a deny pattern over `bash` cannot be checked against a line: the line hides a program it runs, or runs the
 * program the pattern names (its first word; any program when that word has a wildcard) with arguments it does not
 * spell out. Such a line is denied while the rule is in force — never allowed automatically, not even by `--yes`.
 */
export const denyCannotBeChecked = (pattern: string, run: Pick<CommandsRun, 'dynamic' | 'hidden'>): boolean => {
  if (run.hidden !== undefined) return true;
  if (run.dynamic.length === 0) return false;
  const program = pattern.trim().split(/\s+/)[0] ?? '';
  return hasWildcard(program) || run.dynamic.includes(baseName(patternLiteral(program)));
};
