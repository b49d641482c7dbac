import { hasWildcard, patternLiteral } from './permission-rules.js';
import { parseShell } from './shell-parse.js';
import { streamPath } from './shell-side-effects.js';
import { commandVariable, unknownProgram } from './shell-unknown.js';

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
  /**
   * Every place the line runs a program it does not name, with the simple command it was found in (normalised, as in
   * `commands`; the whole line when it cannot be parsed): a judgement part by part (an allow rule per pipeline part)
   * can tell which parts are fully named. `hidden` is the first reason.
   */
  unknown?: Array<{ command: string; reason: string }>;
  /**
   * Per simple command of the line as written (its words joined, as the classifier's `parts`): the commands it runs
   * and whether it runs a program it does not name. Absent when the line cannot be parsed; a part of a line that hides
   * a program outside every part (a substitution, text evaluated as arithmetic) is marked unknown.
   */
  parts?: Array<{ part: string; commands: string[]; unknown: boolean }>;
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
const assignment = /^([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)$/s;
/**
 * Commands that set variables in ways the line does not spell as `name=value` (`read c`, `printf -v c`, `mapfile`,
 * `declare -n`, a sourced file, `eval`, `for c in …`): after one, no variable the line set is known any more.
 */
const assigners = new Set(['read', 'mapfile', 'readarray', 'printf', 'getopts', 'let', 'unset', 'source', '.', 'eval', 'for', 'select', 'coproc', 'export', 'declare', 'local', 'readonly', 'typeset']);
/** Places where bash evaluates text as arithmetic, which runs a `$(…)` held in a variable's value (`a[$(cmd)]`). */
const arithmetic = /\(\(|\[\[|\blet\b|\b(?:declare|typeset|local)\s+-[A-Za-z]*i|\$\{[^}]*\[/;
/** Git plumbing commands and the porcelain verb whose work they do. */
const gitPlumbing: Readonly<Record<string, string>> = { 'send-pack': 'push', 'http-push': 'push', 'fetch-pack': 'fetch' };

const gitValued = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds']);
const maxDepth = 6;

const baseName = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/** Substitute `$name` and `${name}` for the variables the line assigned; others stay as written. */
const expand = (word: string, variables: ReadonlyMap<string, string>): string =>
  word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced?: string, plain?: string) => variables.get((braced ?? plain)!) ?? whole);

/** Record that the line runs a program it does not name, and where (see `CommandsRun.unknown`). */
const hide = (found: CommandsRun, reason: string, command: string): void => {
  found.hidden ??= reason;
  (found.unknown ??= []).push({ command, reason });
};

/** Whether a word is not what the command receives: an expansion, a glob in the program's name, a brace list. */
const unresolved = (word: string): boolean => word.includes('$') || /\{[^}]*(,|\.\.)[^}]*\}/.test(word);

/** All commands the line runs (see `CommandsRun`). */
export const commandsRun = (line: string, depth = 0): CommandsRun => {
  const found: CommandsRun = { commands: [], dynamic: [] };
  collect(line, depth, found);
  return { commands: [...new Set(found.commands)], dynamic: [...new Set(found.dynamic)], ...(found.hidden ? { hidden: found.hidden } : {}), ...(found.unknown ? { unknown: found.unknown } : {}), ...(found.parts ? { parts: found.parts } : {}) };
};

/** What the line assigned so far: known values, and names whose value the line no longer tells (set twice, or by `read`). */
interface Variables {
  values: Map<string, string>;
  unknown: Set<string>;
}

/** Learn one `name=value` / `name+=value`; a second, different value makes the name unknown (`false && c=ls`). */
const learn = (variables: Variables, word: string): void => {
  const match = assignment.exec(word);
  if (!match) return;
  const [, name, append, raw] = match as unknown as [string, string, string, string];
  if (variables.unknown.has(name)) return;
  const value = append ? `${variables.values.get(name) ?? `\${${name}}`}${expand(raw, variables.values)}` : expand(raw, variables.values);
  const before = variables.values.get(name);
  if (before !== undefined && before !== value) {
    variables.values.delete(name);
    variables.unknown.add(name);
  } else variables.values.set(name, value);
};

const collect = (line: string, depth: number, found: CommandsRun): void => {
  if (depth > maxDepth) {
    hide(found, 'commands nested too deeply to read', line.trim());
    return;
  }
  const substitutions: string[] = [];
  const parsed = parseShell(line, { groups: true, substitutions });
  if (!parsed.ok) {
    hide(found, parsed.reason, line.trim());
    return;
  }
  for (const body of substitutions) collect(body, depth + 1, found);
  const outside = found.unknown?.length ?? 0;
  const parts: NonNullable<CommandsRun['parts']> = [];
  const variables: Variables = { values: new Map(), unknown: new Set() };
  for (const segment of parsed.segments) {
    const words = segment.words;
    const text = words.join(' ');
    const ran = { commands: found.commands.length, unknown: found.unknown?.length ?? 0 };
    const partOf = () => ({ part: text, commands: [...new Set(found.commands.slice(ran.commands))], unknown: (found.unknown?.length ?? 0) > ran.unknown });
    // The command word, after keywords (`then read c`) and assignments for it.
    const start = words.findIndex((word) => !keywords.has(word) && !assignment.test(word));
    const head = start === -1 ? '' : words[start]!;
    const rest = start === -1 ? [] : words.slice(start + 1);
    const declared = declarations.has(head);
    // `declare -n r=c` (a reference), `declare -i` (arithmetic): values the line does not spell; plain ones are learnt.
    const options = declared && rest.some((word) => word.startsWith('-') || word.startsWith('+'));
    const assigned = declared && !options ? rest : words.every((word) => assignment.test(word)) ? words : [];
    for (const word of assigned) learn(variables, word);
    if ((assigners.has(head) && !(declared && !options)) || (head === 'for' && rest.length > 0)) {
      for (const name of variables.values.keys()) variables.unknown.add(name);
      variables.values.clear();
    }
    // A variable that changes how bash splits words or what it runs (`IFS=_`, `BASH_ENV=…`, `GIT_PAGER=…`), set in
    // any way: as an assignment, for one command, exported, read, or looped over.
    const named = head === 'printf' ? rest.flatMap((word, index) => (rest[index - 1] === '-v' ? [word] : /^-v./.test(word) ? [word.slice(2)] : [])) : assigners.has(head) ? rest.filter((word) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) : [];
    const changed = words.flatMap((word) => (/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word) ? [word.slice(0, word.search(/\+?=/))] : [])).concat(named);
    const steering = changed.find(commandVariable);
    if (steering !== undefined) hide(found, steering === 'IFS' ? 'the line changes IFS (how bash splits words into a program and its arguments)' : `the line sets ${steering}, which names a program or code bash or a program runs`, text);
    if (head === 'alias') hide(found, 'an alias defined on the line', text);
    if (words[0] === 'for' || words[0] === 'select' || words[0] === 'case' || words[0] === 'in') {
      parts.push({ ...partOf(), unknown: true });
      continue;
    }
    normalise({ words, expanding: segment.expanding }, 0, variables, depth, found, new Set());
    parts.push(partOf());
  }
  // Text that holds a command substitution bash did not run as written (`x='a[$(rm f)]'`) runs when bash evaluates it
  // as arithmetic (`$((x))`, `[[ $x -eq 1 ]]`, an array index).
  const literal = parsed.segments.some((segment) => segment.words.some((word, index) => !segment.expanding[index] && /\$\(|`/.test(word)));
  if (literal && arithmetic.test(line)) hide(found, 'text holding a command substitution is evaluated as arithmetic, which runs it', line.trim());
  if (depth === 0) {
    // What the line hides outside its parts (a substitution's body, arithmetic) belongs to no single part: to all.
    const everywhere = outside > 0 || (literal && arithmetic.test(line));
    found.parts = everywhere ? parts.map((part) => ({ ...part, unknown: true })) : parts;
  }
};

/** The words of a simple command and, per word, whether the shell expands something in it. */
interface Words {
  words: readonly string[];
  expanding: readonly boolean[];
}

/** Record the command that starts at `from` (after keywords and assignments), and what it runs in turn. */
const normalise = (segment: Words, from: number, variables: Variables, depth: number, found: CommandsRun, seen: Set<number>): void => {
  if (seen.has(from)) return;
  seen.add(from);
  const { words } = segment;
  let at = from;
  while (at < words.length && (keywords.has(words[at]!) || assignment.test(words[at]!))) at++;
  if (at >= words.length) return;
  const shown = (word: string): string => expand(word, variables.values);
  const written = shown(words[at]!);
  if (unresolved(written) || /[*?[]/.test(written)) {
    hide(found, `the program ${JSON.stringify(words[at])} is not a literal word`, words.slice(at).join(' '));
    return;
  }
  const program = baseName(written);
  const raw = words.slice(at + 1);
  const args = raw.map(shown);
  const command = [program, ...args].join(' ');
  // A word the shell expands and the line does not resolve: its text is not what the program receives.
  const opaque = (index: number): boolean => segment.expanding[at + 1 + index] === true && unresolved(args[index]!);
  const unknown = unknownProgram(program, args, opaque);
  if (unknown !== undefined) hide(found, unknown, command);
  // A command line held in an argument (`bash -c '…'`, `eval`, `su -c`) is read as written and as expanded: the parser
  // does not keep quotes, so `x=bash; $x -c 'x=git; $x push'` must not see the inner `$x` as the outer one only.
  const nested = (index: number): void => {
    collect(raw[index]!, depth + 1, found);
    if (args[index] !== raw[index]) collect(args[index]!, depth + 1, found);
  };
  found.commands.push(command);
  if (args.some(unresolved)) found.dynamic.push(program);
  const later = (start: number) => {
    for (let next = start; next < words.length; next++) normalise(segment, next, variables, depth, found, seen);
  };
  if (program === 'xargs' || program === 'parallel') {
    // The command gets arguments from its input: an argument the line does not spell out.
    const extended = { words: [...words, '$INPUT'], expanding: [...segment.expanding, true] };
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
      if (args[script + 1] === undefined) hide(found, `${program} -c without a command`, command);
      else nested(script + 1);
      return;
    }
    // Options that take a file (`-o opt`, `--rcfile f`) and the first operand, the script; `-s` reads stdin regardless.
    let operand: string | undefined;
    for (let index = 0; index < args.length; index++) {
      const arg = args[index]!;
      if (arg === '-o' || arg === '+o' || arg === '-O' || arg === '+O') index++;
      else if (arg === '--rcfile' || arg === '--init-file') {
        if (args[index + 1] === undefined || streamPath(args[index + 1]!)) hide(found, `${program} ${arg} reads a stream`, command);
        index++;
      } else if (arg === '-' || arg === '--') {
        operand = args[index + 1] ?? '-';
        break;
      } else if (!arg.startsWith('-') && !arg.startsWith('+')) {
        operand = arg;
        break;
      } else if (/^-[A-Za-z]*s/.test(arg)) {
        operand = '-';
        break;
      }
    }
    if (operand === undefined || operand === '-') hide(found, `${program} reading its commands from its input`, command);
    else if (streamPath(operand)) hide(found, `${program} reading its commands from a stream (${operand})`, command);
    return;
  }
  if (program === 'eval') {
    collect(raw.join(' '), depth + 1, found);
    if (args.join(' ') !== raw.join(' ')) collect(args.join(' '), depth + 1, found);
    return;
  }
  if (program === 'source' || program === '.') return;
  if (program === 'find') {
    const exec = args.findIndex((arg) => ['-exec', '-execdir', '-ok', '-okdir'].includes(arg));
    if (exec !== -1) later(at + 2 + exec);
    return;
  }
  if (program === 'git') {
    let verb = 0;
    while (verb < args.length && args[verb]!.startsWith('-')) verb += gitValued.has(args[verb]!) ? 2 : 1;
    // `-c alias.p=push`, `--config-env alias.p=VAR`, and the joined spellings `--config-env=alias.p=VAR`, `-calias.p=push`.
    if (args.some((arg, index) => ((args[index - 1] === '-c' || args[index - 1] === '--config-env') && /^alias\./i.test(arg)) || /^(?:--config-env=|-c)alias\./i.test(arg))) hide(found, 'a git alias defined on the line', command);
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
