import type { ShellClass } from '../../models/permission.records.js';

/**
 * The options of programs the classifier lists as read-only that make them write a file, run a program or change
 * the machine (`sed '1e cmd'`, `sed 'w f'`, `sort --compress-program=…`, `git diff --output=f`, `git grep -O…`,
 * `date -s`, `rg --pre …`, `less -o f`, `tree -o f`, `uniq in out`). A read-only command runs without a person, so
 * it must be provably read-only: an argument this module cannot prove harmless (a sed script it cannot read, a
 * variable assigned for the command) keeps the command from being read-only, and an option that runs a program the
 * line does not show makes it `unparseable` (like `bash -c`: never allowed automatically).
 */

/** What an argument does beyond reading: the class it adds (none: the command is only not read-only). */
export interface Effect {
  shellClass?: ShellClass;
}

interface Scanned {
  /** Short options with their values (`-o out` → ['o', 'out']); a flag without a value has `undefined`. */
  short: Array<[string, string | undefined]>;
  /** Long options as written (`--out=f` → ['out', 'f'], `--output f` → ['output', 'f'] when the name takes a value). */
  long: Array<[string, string | undefined]>;
  positionals: string[];
}

/**
 * Split arguments the way getopt does: clusters of short options (`-ne`), a value-taking letter consumes the rest
 * of its cluster or the next argument, long options take `=value` or (if named in `longValues`) the next argument,
 * `--` ends the options. Long names are kept as written; `longIs` compares them by prefix, as getopt_long accepts.
 */
const scan = (args: readonly string[], shortValues: string, longValues: readonly string[] = []): Scanned => {
  const scanned: Scanned = { short: [], long: [], positionals: [] };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      scanned.positionals.push(...args.slice(index + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      if (equals !== -1) scanned.long.push([name, arg.slice(equals + 1)]);
      else if (longValues.some((long) => longIs(name, long)) && index + 1 < args.length) scanned.long.push([name, args[++index]]);
      else scanned.long.push([name, undefined]);
    } else if (arg.startsWith('-') && arg.length > 1) {
      for (let at = 1; at < arg.length; at++) {
        const letter = arg[at]!;
        if (shortValues.includes(letter)) {
          const rest = arg.slice(at + 1);
          scanned.short.push([letter, rest !== '' ? rest : args[++index]]);
          break;
        }
        scanned.short.push([letter, undefined]);
      }
    } else scanned.positionals.push(arg);
  }
  return scanned;
};

/** Whether a long option as written names `full` (getopt_long accepts any unambiguous prefix of two letters or more). */
const longIs = (written: string, full: string): boolean => written.length >= 2 && full.startsWith(written);

const hasShort = (scanned: Scanned, letters: string): boolean => scanned.short.some(([letter]) => letters.includes(letter));
const hasLong = (scanned: Scanned, ...names: string[]): boolean => scanned.long.some(([written]) => names.some((name) => longIs(written, name)));

const runs: Effect = { shellClass: 'unparseable' };
const writes: Effect = { shellClass: 'write' };
const unproven: Effect = {};
const changesMachine: Effect = { shellClass: 'privileged' };

/**
 * What a sed script does beyond printing, read command by command (GNU syntax): `e` and the `e` flag of `s` run a
 * command; `w`, `W` and the `w` flag of `s` write a file; `r` and `R` read a file the classifier cannot judge. Anything
 * the scanner does not recognise is unproven. Returns undefined for a script that only reads its input and prints.
 */
export const sedScriptEffect = (script: string): Effect | undefined => {
  const scanned = scanSedScript(script);
  return scanned.runs ? runs : scanned.writes ? writes : scanned.unproven ? unproven : undefined;
};

/** What a sed script holds, read to its end (or to the first command the scanner does not know: `unproven`). */
const scanSedScript = (script: string): { runs: boolean; writes: boolean; unproven: boolean } => {
  const found = { runs: false, writes: false, unproven: false };
  const stop = (what: 'runs' | 'unproven') => ({ ...found, [what]: true });
  let at = 0;
  const peek = () => script[at];
  const skipSpace = () => {
    while (at < script.length && (script[at] === ' ' || script[at] === '\t')) at++;
  };
  const toLineEnd = () => {
    while (at < script.length && script[at] !== '\n') at++;
  };
  /** Read up to an unescaped `delimiter`; false when the script ends first. */
  const delimited = (delimiter: string): boolean => {
    while (at < script.length) {
      const character = script[at++]!;
      if (character === '\\') at++;
      else if (character === delimiter) return true;
      else if (character === '\n' && delimiter !== '\n') return false;
    }
    return false;
  };
  const address = (): boolean => {
    const character = peek();
    if (character === undefined) return true;
    if (/[0-9]/.test(character)) {
      while (at < script.length && /[0-9~]/.test(script[at]!)) at++;
    } else if (character === '$') at++;
    else if (character === '/' || character === '\\') {
      const delimiter = character === '\\' ? script[at + 1] : '/';
      at += character === '\\' ? 2 : 1;
      if (delimiter === undefined || delimiter === '\n' || !delimited(delimiter)) return false;
      while (at < script.length && /[IM]/.test(script[at]!)) at++;
    }
    return true;
  };
  while (at < script.length) {
    const start = peek()!;
    if (/[\s;]/.test(start)) {
      at++;
      continue;
    }
    if (!address()) return stop('unproven');
    skipSpace();
    if (peek() === ',') {
      at++;
      skipSpace();
      if (peek() === '+' || peek() === '~') at++;
      if (!address()) return stop('unproven');
      skipSpace();
    }
    while (peek() === '!' || peek() === ' ') at++;
    const command = script[at++];
    if (command === undefined) return stop('unproven');
    if (command === '{') continue;
    switch (command) {
      case '}':
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
        break;
      case 'l':
      case 'L':
      case 'q':
      case 'Q':
        skipSpace();
        while (at < script.length && /[0-9]/.test(script[at]!)) at++;
        break;
      case '#':
      case 'a':
      case 'i':
      case 'c':
        // Text to the end of the line; `a\` continues over lines that end with a backslash.
        while (at < script.length && script[at] !== '\n') at += script[at] === '\\' ? 2 : 1;
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        // A label ends at white space or `;` (GNU sed reads `be e` as "branch to e, then run e").
        skipSpace();
        while (at < script.length && !/[\s;]/.test(script[at]!)) at++;
        break;
      case 's':
      case 'y': {
        const delimiter = script[at++];
        if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') return stop('unproven');
        if (!delimited(delimiter) || !delimited(delimiter)) return stop('unproven');
        if (command === 'y') break;
        while (at < script.length && /[gpiImMe0-9w]/.test(script[at]!)) {
          const flag = script[at++]!;
          if (flag === 'e') return stop('runs');
          if (flag === 'w') {
            // The file name runs to the end of the line.
            found.writes = true;
            toLineEnd();
          }
        }
        break;
      }
      case 'e':
        return stop('runs');
      case 'w':
      case 'W':
        found.writes = true;
        toLineEnd();
        break;
      default:
        // `r`, `R` read a file the classifier cannot judge; anything else is not a command this scanner knows.
        return stop('unproven');
    }
    skipSpace();
    const next = peek();
    if (next !== undefined && !/[\n;}#]/.test(next)) return stop('unproven');
    if (next === '#') toLineEnd();
  }
  return found;
};

/** A path that is a stream rather than a file (`-`, `/dev/stdin`, `/proc/self/fd/0`), or one the line computes (`$f`, `<(…)`). */
export const streamPath = (word: string): boolean => word === '-' || /^\/(?:dev|proc)\//.test(word) || word.includes('$') || /^[<>]?\(/.test(word);

/**
 * Whether sed may run a command rein cannot name: its script holds `e` or the `e` flag of `s`, a script the scanner
 * cannot read to its end, or a script read from a stream. A script *file* (`-f prog.sed`) is not read: undefined.
 */
export const sedRunsCommand = (args: readonly string[]): string | undefined => {
  const scanned = scan(args, 'efl', ['expression', 'file', 'line-length']);
  const files = [...scanned.short.filter(([letter]) => letter === 'f').map(([, value]) => value), ...scanned.long.filter(([name]) => longIs(name, 'file')).map(([, value]) => value)];
  if (files.some((file) => file === undefined || streamPath(file))) return 'reads its script from a stream';
  const scripts = [...scanned.short.filter(([letter]) => letter === 'e').map(([, value]) => value), ...scanned.long.filter(([name]) => longIs(name, 'expression')).map(([, value]) => value)];
  if (scripts.some((script) => script === undefined)) return 'has a script it cannot read';
  const script = scripts.length > 0 ? scripts.join('\n') : files.length > 0 ? undefined : scanned.positionals[0];
  if (script === undefined) return undefined;
  const found = scanSedScript(script);
  if (found.runs) return 'runs a command (the e command, or the e flag of s)';
  return found.unproven ? 'has a script rein cannot read to its end (it could hold the e command)' : undefined;
};

const sedEffect = (args: readonly string[]): Effect | undefined => {
  const scanned = scan(args, 'efl', ['expression', 'file', 'line-length']);
  if (hasShort(scanned, 'f') || hasLong(scanned, 'file')) return unproven;
  const scripts = [...scanned.short.filter(([letter]) => letter === 'e').map(([, value]) => value), ...scanned.long.filter(([name]) => longIs(name, 'expression')).map(([, value]) => value)];
  if (scripts.some((script) => script === undefined)) return unproven;
  const script = scripts.length > 0 ? scripts.join('\n') : scanned.positionals[0];
  if (script === undefined) return undefined;
  return sedScriptEffect(script);
};

/** Variables a command may be given without changing what it runs or writes. */
const harmlessAssignment = /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR|TERM|GREP_COLORS?)=/;

/**
 * What an option of a program listed as read-only does beyond reading, or undefined when every argument is one the
 * module can prove harmless. `words` is the whole simple command (with its leading assignments), `command` the
 * program's name and `args` its arguments after wrappers.
 */
export const readOnlyOptionEffect = (words: readonly string[], command: string, args: readonly string[]): Effect | undefined => {
  // `GIT_EXTERNAL_DIFF=cmd git diff`, `LESSOPEN='|cmd' less f`, `PAGER=…`: a variable can make a reader run a program.
  const assignments = words.slice(0, Math.max(0, words.length - args.length - 1));
  if (assignments.some((word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word) && !harmlessAssignment.test(word))) return unproven;
  switch (command) {
    case 'sed':
      return sedEffect(args);
    case 'sort': {
      const scanned = scan(args, 'koStT', ['key', 'output', 'buffer-size', 'field-separator', 'temporary-directory', 'compress-program', 'parallel', 'files0-from', 'random-source', 'batch-size', 'sort']);
      if (hasLong(scanned, 'compress-program')) return runs;
      if (hasShort(scanned, 'o') || hasLong(scanned, 'output')) return writes;
      return undefined;
    }
    case 'date': {
      const scanned = scan(args, 'dfrs', ['date', 'file', 'reference', 'set']);
      // `date -s …` and `date MMDDhhmm` set the clock.
      if (hasShort(scanned, 's') || hasLong(scanned, 'set') || scanned.positionals.some((arg) => !arg.startsWith('+'))) return changesMachine;
      return undefined;
    }
    case 'hostname': {
      const scanned = scan(args, 'F', ['file']);
      if (scanned.positionals.length > 0 || hasShort(scanned, 'Fb') || hasLong(scanned, 'file', 'boot')) return changesMachine;
      return undefined;
    }
    case 'rg':
      // ripgrep runs a preprocessor (`--pre`) or a program for its hostname (`--hostname-bin`).
      return args.some((arg) => arg === '--pre' || arg.startsWith('--pre=') || arg === '--hostname-bin' || arg.startsWith('--hostname-bin=')) ? runs : undefined;
    case 'less':
    case 'more': {
      if (args.some((arg) => arg.startsWith('+'))) return runs;
      const scanned = scan(args, 'bhjkKoOpPtTxyz#', ['log-file', 'LOG-FILE', 'lesskey-file', 'lesskey-src', 'lesskey-content', 'pattern', 'tag', 'prompt']);
      if (hasShort(scanned, 'oO') || scanned.long.some(([name]) => longIs(name, 'log-file') || longIs(name, 'LOG-FILE'))) return writes;
      if (hasShort(scanned, 'kK') || scanned.long.some(([name]) => name.startsWith('lesskey'))) return runs;
      return undefined;
    }
    case 'tree': {
      const scanned = scan(args, 'LPIoHT', ['charset', 'filelimit', 'timefmt', 'sort', 'fromfile', 'output']);
      // `-o file` writes its listing; `-R` with `-H` writes an HTML page into every directory.
      if (hasShort(scanned, 'oR') || hasLong(scanned, 'output')) return writes;
      return undefined;
    }
    case 'uniq': {
      const scanned = scan(args, 'fsw', ['skip-fields', 'skip-chars', 'check-chars']);
      return scanned.positionals.length > 1 ? writes : undefined;
    }
    case 'xxd': {
      const valued = new Set(['-c', '-cols', '-g', '-groupsize', '-l', '-len', '-o', '-offset', '-s', '-seek', '-n', '-name']);
      const positionals = args.filter((arg, index) => !arg.startsWith('-') && !valued.has(args[index - 1] ?? ''));
      return positionals.length > 1 ? writes : undefined;
    }
    case 'file': {
      const scanned = scan(args, 'mfFeP', ['magic-file', 'files-from', 'separator', 'exclude', 'parameter']);
      return hasShort(scanned, 'C') || hasLong(scanned, 'compile') ? writes : undefined;
    }
    default:
      return undefined;
  }
};

/**
 * The options of a git subcommand the classifier lists as read-only that write or run something: `--output=<file>`
 * (diff, log, show, …), `git grep -O`/`--open-files-in-pager` (runs a pager command), `--ext-diff` (runs a configured
 * diff program), `git reflog expire|delete` (drops reflog entries).
 */
export const gitReadOnlyEffect = (verb: string, args: readonly string[]): Effect | undefined => {
  const after = args.slice(args.indexOf(verb) + 1);
  if (verb === 'reflog' && after.some((arg) => arg === 'expire' || arg === 'delete')) return { shellClass: 'delete' };
  if (after.some((arg) => arg === '--output' || arg.startsWith('--output='))) return writes;
  if (after.some((arg) => arg === '--ext-diff')) return runs;
  if (verb === 'grep' && (after.some((arg) => arg.startsWith('--op') && 'open-files-in-pager'.startsWith(arg.slice(2).split('=')[0]!)) || scan(after, 'ABCefm', []).short.some(([letter]) => letter === 'O'))) return runs;
  return undefined;
};
