import { gitKeyRunsProgram } from './git-config-hazard.js';
import { gitReadOnlyEffect, readOnlyOptionEffect, sedRunsCommand, streamPath } from './shell-side-effects.js';

/*
 * What a shell line runs that no reading of its words can name. A deny rule over `bash` matches the programs a line
 * runs (`shell-commands.ts`); these are the ways a line runs a program that is not one of its words: code handed to an
 * interpreter on the command line, a program or script read from a stream, a variable that makes bash or a program
 * run something, a program named in another program's option. Each returns why, in words, or undefined. A line with
 * any of them counts as running an unknown program: while a bash deny rule is in force it is denied.
 *
 * What is not here, by design: a script *file* run by its interpreter (`python tool.py`, `bash build.sh`,
 * `node --test`, `npm test`, `make`) runs what the file says, which no deny rule reads.
 */

/** Names of the awk family; an awk program can run commands (`system()`, pipes, gawk's `@` calls and `@load`). */
const awks = new Set(['awk', 'gawk', 'mawk', 'nawk', 'original-awk']);
const awkValued = new Set(['-F', '-v', '-f', '-E', '-i', '-l', '-W', '--field-separator', '--assign', '--file', '--exec', '--include', '--load']);

/** Interpreters and how each takes code on its command line. */
interface Interpreter {
  /** Short option letters that take code, or make the interpreter read its program from elsewhere (`perl -x`). */
  codeLetters: string;
  /** Long options (or single-dash words, `-Command`) that take code. */
  codeLong?: readonly string[];
  /** Short letters whose value is the rest of their cluster (`-Ilib`, `-i.bak`), so no code letter follows in it. */
  valued: string;
  /** Options whose value is the next word (`-W ignore`, `--require ./x.js`). */
  valuedWords?: readonly string[];
  /** A sole argument that runs nothing (`--version`). */
  harmless?: readonly string[];
  /** Words that make it run files rather than code from the line (`node --test`, `bun run`, `deno run`): a script file. */
  runsFiles?: readonly string[];
  /** Subcommands that take code (`deno eval`) or read it from the input (`deno repl`). */
  codeCommands?: readonly string[];
}

const versionFlags = ['--version', '-V', '-v', '--help', '-h'];
const interpreters: ReadonlyArray<[RegExp, Interpreter]> = [
  [/^(?:python[\d.]*|pypy[\d.]*)$/, { codeLetters: 'c', valued: 'WXQ', valuedWords: ['-W', '-X', '--check-hash-based-pycs'], harmless: versionFlags, runsFiles: ['-m'] }],
  [/^perl[\d.]*$/, { codeLetters: 'eEMmx', valued: 'iIFdD', harmless: versionFlags }],
  [/^(?:ruby[\d.]*|jruby|truffleruby)$/, { codeLetters: 'e', valued: 'IrECFTKWx0', valuedWords: ['-I', '-r', '-E', '-C', '-F', '--encoding'], harmless: versionFlags }],
  [/^(?:node|nodejs)$/, { codeLetters: 'ep', codeLong: ['--eval', '--print'], valued: 'rC', valuedWords: ['-r', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '--conditions', '-C', '--env-file'], harmless: versionFlags, runsFiles: ['--test', '--run', '--watch'] }],
  [/^bun$/, { codeLetters: 'ep', codeLong: ['--eval', '--print'], valued: 'rc', valuedWords: ['-r', '--preload', '--cwd', '--config', '-c'], harmless: versionFlags, runsFiles: ['run', 'test', 'x', 'build', 'install', 'add', 'remove', 'i', 'a', 'create', 'init', 'pm', 'link', 'unlink', 'upgrade', 'update', 'outdated', 'publish'] }],
  [/^deno$/, { codeLetters: '', valued: '', harmless: versionFlags, codeCommands: ['eval', 'repl'], runsFiles: ['run', 'test', 'task', 'compile', 'bench', 'fmt', 'lint', 'check', 'install', 'add', 'info', 'doc', 'serve'] }],
  [/^php[\d.]*$/, { codeLetters: 'rRBEa', valued: 'cdfzFt', valuedWords: ['-c', '-d', '-f', '-z', '-F', '-t'], harmless: versionFlags }],
  [/^(?:lua[\d.]*|luajit)$/, { codeLetters: 'e', valued: 'l', valuedWords: ['-l'], harmless: ['-v'] }],
  [/^(?:Rscript|R)$/, { codeLetters: 'e', valued: '', harmless: ['--version', '--help'] }],
  [/^(?:osascript|pwsh|powershell|expect|tclsh[\d.]*|wish[\d.]*|jshell|irb|ghci|julia)$/, { codeLetters: 'ecC', codeLong: ['-command', '-Command', '-encodedcommand', '-EncodedCommand', '-ec', '--eval'], valued: '', harmless: versionFlags }],
];

/** Programs that interpret commands of their own from their input or options (`!rm f` in ed, `:!rm f` in vim). */
const commandEditors = new Set(['ed', 'red', 'ex', 'vi', 'vim', 'nvim', 'view', 'vimdiff', 'gdb', 'lldb', 'emacs']);
/** Database shells whose own commands run a program (`\\!` in psql and mysql, `.shell` / `.system` in sqlite3). */
const databaseShells = new Set(['psql', 'mysql', 'mariadb', 'sqlite3']);

/**
 * Variables that name a program or hold code that bash or a program runs: how words split (`IFS`), what bash runs
 * before a script or on each traced line (`BASH_ENV`, `ENV`, `PS4`, `PROMPT_COMMAND`), pagers, editors, askpass and
 * ssh programs, git's own (`GIT_*`: external diff, pager, config), interpreter options that load code (`NODE_OPTIONS`
 * accepts `--import data:…`, `PERL5OPT` `-M`), `TAR_OPTIONS` (`--to-command`), `MAKEFLAGS` (`--eval`), preloaded
 * libraries, exported shell functions (`BASH_FUNC_*`).
 */
export const commandVariable = (name: string): boolean =>
  /^(?:IFS|BASH_ENV|ENV|PS4|PS1|PS0|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|BASH_LOADABLES_PATH|EXECIGNORE|GLOBIGNORE|HISTFILE|FCEDIT|VISUAL|BROWSER|SUDO_ASKPASS|SSH_ASKPASS|LESSOPEN|LESSCLOSE|LESSKEY|MANOPT|NODE_OPTIONS|PERL5OPT|PERL5DB|PERL5LIB|PERLLIB|RUBYOPT|PYTHONSTARTUP|PYTHONINSPECT|PYTHONWARNINGS|PYTHONHOME|PYTHONPATH|TAR_OPTIONS|MAKEFLAGS|GNUMAKEFLAGS|MFLAGS|MAKEFILES|RSYNC_RSH|RSYNC_CONNECT_PROG|CVS_RSH|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|BASH_FUNC_.*|GIT_.*|.*PAGER|.*EDITOR|.*ASKPASS|.*SSH_COMMAND|.*_SSH)$/.test(name);

/** Options of the awk family's arguments: where the program text is (when on the command line) and the files it loads. */
const awkProgram = (args: readonly string[]): { at?: number; files: string[]; loads: boolean } => {
  const files: string[] = [];
  let loads = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') return { ...(args[index + 1] === undefined || files.length > 0 ? {} : { at: index + 1 }), files, loads };
    const [name, value] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const short = /^-[A-Za-z]/.test(name) && !name.startsWith('--') ? name.slice(0, 2) : name;
    if (awkValued.has(short)) {
      const given = value ?? (name.length > 2 && !name.startsWith('--') ? name.slice(2) : args[++index]);
      if (short === '-f' || short === '-E' || short === '--file' || short === '--exec' || short === '-i' || short === '--include') files.push(given ?? '');
      if (short === '-l' || short === '--load') loads = true;
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) continue;
    return files.length > 0 ? { files, loads } : { at: index, files, loads };
  }
  return { files, loads };
};

/** Why an awk program can run a command: `system(…)`, a pipe to or from a command, gawk's `@` (indirect calls, `@load`). */
const awkRuns = (program: string): string | undefined => {
  const text = program.replace(/\\\r?\n/g, '');
  if (/\bsystem\b/.test(text)) return 'calls system()';
  if (text.includes('|')) return 'pipes to or from a command';
  if (text.includes('@')) return "uses gawk's @ (an indirect call, @load or @include)";
  return undefined;
};

/** A word that names a script file: a path, or a name with a script's extension. */
const scriptLike = (word: string): boolean => word.includes('/') || /\.(?:py|pyw|pl|pm|t|rb|js|mjs|cjs|ts|mts|cts|jsx|tsx|php|lua|r|R|tcl|exp|jl|ps1|scpt|applescript)$/.test(word);

/**
 * The code an interpreter is given on its command line, or the stream it reads its program from; undefined for a
 * script file. Options are read up to the script: a word that names one (`tool.py`, `./bin/x`) ends them, and any
 * other operand is passed over, so an option value the table does not know (`perl -I lib -e …`) cannot hide code.
 */
const interpreterCode = (program: string, spec: Interpreter, args: readonly string[]): string | undefined => {
  if (args.length === 1 && spec.harmless?.includes(args[0]!)) return undefined;
  let operand = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const name = arg.split('=')[0]!;
    if (spec.runsFiles?.includes(name)) return undefined;
    if (spec.codeCommands?.includes(arg)) return `${program} ${arg} runs code given on the command line or its input`;
    if (arg === '-') return `${program} reads its program from its input`;
    if (arg === '--') {
      const script = args[index + 1];
      if (script === undefined) break;
      return streamPath(script) ? `${program} reads its program from a stream (${script})` : undefined;
    }
    if (/(?:^|[=\s])data:/.test(arg)) return `${program} loads code from a data: URL`;
    if (spec.codeLong?.includes(name)) return `${program} ${name} runs code given on the command line`;
    if (spec.valuedWords?.includes(arg)) {
      index++;
      if (/^data:/.test(args[index] ?? '')) return `${program} loads code from a data: URL`;
      continue;
    }
    if (arg.startsWith('--')) continue;
    if (arg.startsWith('-') && arg.length > 1) {
      for (const letter of arg.slice(1)) {
        if (spec.codeLetters.includes(letter)) return `${program} -${letter} runs code given on the command line`;
        if (spec.valued.includes(letter)) break;
      }
      continue;
    }
    if (streamPath(arg)) return `${program} reads its program from a stream (${arg})`;
    if (scriptLike(arg)) return undefined;
    operand = true;
  }
  return operand ? undefined : `${program} reads its program from its input`;
};

/** Options that make a program run another program the line names only as a value (`tar --to-command=…`). */
const optionRunsProgram = (program: string, args: readonly string[]): string | undefined => {
  const has = (...names: string[]) => args.find((arg) => names.some((name) => arg === name || arg.startsWith(`${name}=`) || (name.length === 2 && !name.startsWith('--') && arg.startsWith(name) && arg.length > 2)));
  const found = (() => {
    switch (program) {
      case 'tar':
      case 'bsdtar':
        return has('--to-command', '--use-compress-program', '-I', '--checkpoint-action', '--info-script', '--new-volume-script', '-F', '--rsh-command', '--rmt-command') ?? (/^[A-Za-z]*[IF][A-Za-z]*$/.test(args[0] ?? '') && !args[0]!.startsWith('-') ? args[0] : undefined);
      case 'rsync':
        return has('-e', '--rsh', '--rsync-path');
      case 'zip':
        return has('-TT', '--unzip-command');
      case 'split':
        return has('--filter');
      case 'ssh':
      case 'scp':
      case 'sftp':
        return args.find((arg, index) => /^(?:-o)?(?:ProxyCommand|LocalCommand|KnownHostsCommand|PermitLocalCommand|RemoteCommand|Match)/i.test(arg) && (arg.startsWith('-o') || args[index - 1] === '-o')) ?? (program !== 'ssh' ? has('-S') : undefined);
      case 'man':
        return has('-P', '--pager', '-H', '--html');
      case 'git': {
        // `git -c core.pager=… log`, `--config-env alias.p=VAR`: configuration that names a program or renames a command.
        const keys = args.flatMap((arg, index) => (args[index - 1] === '-c' || args[index - 1] === '--config-env' ? [arg] : /^(?:--config-env=|-c.)/.test(arg) ? [arg.replace(/^(?:--config-env=|-c)/, '')] : []));
        const verb = args.find((arg, index) => !arg.startsWith('-') && !['-c', '-C', '--config-env', '--git-dir', '--work-tree', '--namespace', '--exec-path'].includes(args[index - 1] ?? ''));
        return keys.find((entry) => gitKeyRunsProgram(entry.split('=')[0]!)) ?? (verb !== undefined && gitReadOnlyEffect(verb, args)?.shellClass === 'unparseable' ? verb : undefined);
      }
      default:
        return undefined;
    }
  })();
  if (found !== undefined) return `${program} ${found} runs a program the line names only in an option`;
  // The read-only programs' options that run one (`sort --compress-program`, `rg --pre`, `less +!cmd`, `git --ext-diff`).
  return readOnlyOptionEffect([program, ...args], program, args)?.shellClass === 'unparseable' ? `${program} runs a program named in one of its options` : undefined;
};

/**
 * Why one simple command runs a program the line does not name (see the file comment), or undefined. `program` is
 * the base name, `args` its arguments as the shell passes them (variables the line assigned expanded).
 */
export const unknownProgram = (program: string, args: readonly string[], opaque: (index: number) => boolean = () => false): string | undefined => {
  if (awks.has(program)) {
    const { at, files, loads } = awkProgram(args);
    if (loads) return `${program} loads an extension library`;
    if (files.some(streamPath)) return `${program} reads its program from a stream`;
    if (at === undefined) return files.length > 0 ? undefined : `${program} has no program to read`;
    if (opaque(at)) return `the ${program} program is not a literal word`;
    const runs = awkRuns(args[at]!);
    return runs === undefined ? undefined : `the ${program} program ${runs}`;
  }
  if (program === 'sed') {
    const runs = sedRunsCommand(args);
    return runs === undefined ? undefined : `sed ${runs}`;
  }
  if (program === 'source' || program === '.') {
    const file = args.find((arg) => arg !== '--');
    if (file === undefined) return `${program} reads a stream (a process substitution or its input)`;
    return streamPath(file) ? `${program} of a stream or a computed path (${file})` : undefined;
  }
  if (program === 'trap') {
    const action = args[0];
    if (action === undefined || action === '-p' || action === '-l' || action === '-' || (action === '' && args.length > 1)) return undefined;
    return 'trap runs a command later, when a signal or the end of the shell comes';
  }
  if (program === 'hash' && args.some((arg) => /^-[A-Za-z]*p/.test(arg))) return 'hash -p makes a name run another program';
  if (program === 'enable' && args.some((arg) => /^-[A-Za-z]*f/.test(arg))) return 'enable -f loads a builtin from a library';
  if (program === 'make' || program === 'gmake') {
    if (args.some((arg) => arg === '--eval' || arg.startsWith('--eval='))) return `${program} --eval runs makefile text given on the command line`;
    const file = args.findIndex((arg) => arg === '-f' || arg === '--file' || arg === '--makefile');
    if (file !== -1 && (args[file + 1] === undefined || streamPath(args[file + 1]!))) return `${program} reads its makefile from a stream`;
    return undefined;
  }
  if (commandEditors.has(program)) return `${program} runs commands of its own (from its input or options)`;
  if (databaseShells.has(program) && args.some((arg) => /\\!|\.shell\b|\.system\b|\bsystem\b/.test(arg))) return `${program} is given a command that runs a program`;
  for (const [pattern, spec] of interpreters) if (pattern.test(program)) return interpreterCode(program, spec, args);
  return optionRunsProgram(program, args);
};
