import { parseShell, type ShellSegment } from '../policy/shell-parse.js';

/**
 * Whether a shell line runs a test suite whose exit the line's exit reports. A line counts only when one of its
 * simple commands *runs* a suite — its program word and subcommand (`npm test`, `npx vitest`, `pytest`, `go test`,
 * `node --test`, …, after assignments and wrappers such as `env`, `timeout`, `time`) — and every such command's
 * success follows from the line's exit 0: not when a runner's name is an argument (`echo npm test`,
 * `grep pytest x`, `cat vitest.config.js`), a help or listing call (`npm test --help`, `pytest --collect-only`),
 * nor when the exit is masked (`npm test || true`, `npm test; true`, `npm test | tail`, `npm test &`, `! npm test`).
 * `set -e` and `set -o pipefail` earlier in the line are honoured. A line the parser cannot follow (subshells,
 * groups, command substitution, control flow) is not a verification: the classifier never reports a run it cannot
 * read from the exit.
 */
export const runsTestSuite = (command: string): boolean => runsTestSuiteAt(command, 0);

/**
 * Whether some simple command of a line runs a test suite, whether or not the line reports its exit
 * (`trap 'exit 0' EXIT; node --test`, `npm test || true`): the line is about tests, masked or not.
 */
export const invokesTestRunner = (command: string): boolean => {
  const parsed = parseShell(command);
  return parsed.ok && parsed.segments.some((segment) => segmentRunsSuite(segment.words, 0));
};

/** Runner options that run only some of the suite's tests: by name (`-t`, `--grep`, `-k`, `-run`, …) or `.only`. */
const selectingFlag = /^(?:--test-name-pattern|--test-skip-pattern|--test-only|--testNamePattern|--testPathPattern|-t|--grep|-g|--fgrep|-k|-run|--skip)(?:=|$)/;

/**
 * Whether a test command selects which tests run (a name filter, `--test-only`): its exit 0 then says only that the
 * selected tests passed — none, when the filter matched nothing — never that the repository's tests pass.
 */
export const selectsTests = (command: string): boolean => command.split(/\s+/).some((word) => selectingFlag.test(word.replace(/^['"]/, '')));

/** An argument naming a test file or a folder below the suite's root (`test/helpers.test.js`, `tests/unit`, `a_test.go`). */
const testPathArgument = (word: string): boolean => {
  if (/\.(?:[cm]?[jt]sx?|py|go|rb)$/.test(word)) return true;
  return word.includes('/') && !word.endsWith('...') && !/^(?:\.\/)?(?:tests?|specs?|__tests__|src|lib)?\/?$/.test(word);
};

/**
 * Whether a test command runs only some files of the suite: a runner given a test file or folder
 * (`node --test test/helpers.test.js`, `npx vitest run test/a.test.ts`, `pytest tests/unit/test_x.py`). Its exit 0
 * says that those files passed (none ran, when the file holds no test), never that the repository's tests pass.
 */
export const selectsFiles = (command: string): boolean => {
  const parsed = parseShell(command);
  if (!parsed.ok) return false;
  return parsed.segments.some((segment) => segmentRunsSuite(segment.words, 0) && fileArguments(unwrap(segment.words).slice(1)).some(testPathArgument));
};

/** Runner options that take a value which is not a test to run (a config file, a reporter, a module to preload). */
const runnerValueFlags = new Set(['--config', '-c', '--reporter', '--test-reporter', '--test-reporter-destination', '--root', '-r', '--require', '--import', '--loader', '--experimental-loader', '--project', '--rootdir', '--rootDir', '--environment', '--setupFiles', '--cov', '--cov-config', '--tsconfig', '--outputFile', '--coverage.reportsDirectory', '--manifest-path']);

/** The arguments that may name test files: not flags, nor the values of flags known to take one, nor config files. */
const fileArguments = (args: readonly string[]): string[] => {
  const result: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') continue;
    if (arg.startsWith('-')) {
      if (runnerValueFlags.has(arg) || valueFlags.has(arg)) index++;
      continue;
    }
    if (!/(?:^|[./])config\.|rc\.[cm]?[jt]s$/.test(arg)) result.push(arg);
  }
  return result;
};

/** Programs that check without running tests (a type checker, `go vet`, `cargo check`): their exit is all they report. */
const checkerOnly = (words: readonly string[]): boolean => {
  const real = unwrap(words);
  const program = baseName(real[0] ?? '');
  const sub = positional(real.slice(1))[0];
  if (program === 'npx' || program === 'pnpx' || program === 'bunx') return checkerOnly(afterRunner(real.slice(1)));
  return program === 'tsc' || program === 'vue-tsc' || (program === 'go' && sub === 'vet') || (program === 'cargo' && (sub === 'check' || sub === 'clippy'));
};

/**
 * Whether every suite-running command of a line is a checker that prints no count (`tsc --noEmit`, `go vet ./...`,
 * `cargo check`): an exit 0 then says all there is to say. A test runner's exit 0 needs its summary besides.
 */
export const checksOnly = (command: string): boolean => {
  const parsed = parseShell(command);
  if (!parsed.ok) return false;
  const runners = parsed.segments.filter((segment) => segmentRunsSuite(segment.words, 0));
  return runners.length > 0 && runners.every((segment) => checkerOnly(segment.words));
};

/**
 * The package script a line runs through its package manager (`npm test` → `test`, `npm run test:unit` →
 * `test:unit`, `yarn test`, `pnpm run check`), when the line runs exactly one and runs it in the workspace root it
 * was called in (no `cd`, `--prefix`, `-C`, `--workspace`, `--filter`, `--dir`); undefined otherwise.
 */
export const packageScriptOf = (command: string): string | undefined => {
  const parsed = parseShell(command);
  if (!parsed.ok) return undefined;
  if (parsed.segments.some((segment) => ['cd', 'pushd'].includes(unwrap(segment.words)[0] ?? ''))) return undefined;
  const names: string[] = [];
  for (const segment of parsed.segments) {
    const real = unwrap(segment.words);
    const program = baseName(real[0] ?? '');
    if (!['npm', 'yarn', 'pnpm', 'bun'].includes(program)) continue;
    const args = real.slice(1);
    if (args.some((arg) => valueFlags.has(arg.replace(/=.*$/, '')))) return undefined;
    const words = positional(args);
    if (words[0] === 'test' || words[0] === 't' || words[0] === 'tst') names.push('test');
    else if ((words[0] === 'run' || words[0] === 'run-script') && words[1] !== undefined && scriptNames.test(words[1])) names.push(words[1]);
  }
  return names.length === 1 ? names[0] : undefined;
};

const maximumNesting = 3;

const baseName = (word: string): string => word.slice(word.lastIndexOf('/') + 1);
const isAssignment = (word: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
const nonRunning = new Set(['--help', '-h', '--version', '--init', '--collect-only', '--co', '--listTests', '--list', '-list', '--showConfig', '--list-tests']);
/**
 * Builtins that change what a line's exit means or what its words run: `trap … EXIT` rewrites the shell's exit
 * status, `alias` and `eval` rewrite commands. A line with one is not read as reporting a suite's exit.
 */
const exitRewriting = new Set(['trap', 'alias', 'eval', 'enable', 'shopt']);
/** Assignments that make a shell run a file of the line's choosing first (where a `trap` may wait). */
const startupFiles = /^(?:BASH_ENV|ENV|PROMPT_COMMAND|BASH_FUNC_[\w%-]*)=/;
const reservedWords = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'select', 'function', 'coproc', '!', '[[', ']]']);
const scriptNames = /^(test|tests|check|verify)([:-].*)?$/;
const directRunners = new Set(['vitest', 'jest', 'mocha', 'ava', 'tap', 'jasmine', 'tsc', 'pytest', 'py.test', 'rspec', 'phpunit', 'ctest', 'tox', 'nox']);
const valueFlags = new Set(['--prefix', '-C', '--workspace', '-w', '--filter', '--dir', '--cwd']);
const packageFlags = new Set(['-p', '--package']);

/** Drop assignments and wrappers (`env A=1`, `timeout 60`, `time -p`, `nice -n 5`, `nohup`, `command`). */
const unwrap = (words: readonly string[]): string[] => {
  let rest = [...words];
  for (;;) {
    while (rest.length > 0 && isAssignment(rest[0]!)) rest = rest.slice(1);
    const first = rest[0] === undefined ? undefined : baseName(rest[0]);
    if (first === 'env' || first === 'time' || first === 'nohup' || first === 'command' || first === 'stdbuf' || first === 'exec') {
      rest = rest.slice(1);
      while (rest.length > 0 && (rest[0]!.startsWith('-') || isAssignment(rest[0]!))) rest = rest.slice(rest[0] === '-u' ? 2 : 1);
    } else if (first === 'nice' || first === 'timeout') {
      rest = rest.slice(1);
      while (rest.length > 0 && rest[0]!.startsWith('-')) rest = rest.slice(['-n', '-s', '-k', '--signal', '--kill-after'].includes(rest[0]!) ? 2 : 1);
      if (first === 'timeout') rest = rest.slice(1);
    } else {
      return rest;
    }
  }
};

/** The arguments with flags (and the values of the flags known to take one) left out. */
const positional = (args: readonly string[]): string[] => {
  const result: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (valueFlags.has(arg)) index++;
      continue;
    }
    result.push(arg);
  }
  return result;
};

/** After `npx`, `pnpm exec`, `yarn dlx`, `bunx`: the package's binary and its arguments. */
const afterRunner = (args: readonly string[]): string[] => {
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) index += packageFlags.has(args[index]!) ? 2 : 1;
  return args.slice(index);
};

/** Whether the words of one simple command (quotes removed) run a test suite. */
const segmentRunsSuite = (words: readonly string[], depth: number): boolean => {
  const real = unwrap(words);
  if (real.length === 0) return false;
  const program = baseName(real[0]!);
  const args = real.slice(1);
  if ((program === 'bash' || program === 'sh' || program === 'dash' || program === 'zsh') && args.length >= 2 && /^-[a-z]*c[a-z]*$/.test(args[0]!)) {
    return depth < maximumNesting && runsTestSuiteAt(args[1]!, depth + 1);
  }
  if (args.some((arg) => nonRunning.has(arg))) return false;
  const words0 = positional(args);
  const sub = words0[0];
  switch (program) {
    case 'npm':
      if (sub === 'test' || sub === 't' || sub === 'tst') return true;
      return (sub === 'run' || sub === 'run-script') && words0[1] !== undefined && scriptNames.test(words0[1]);
    case 'yarn':
    case 'pnpm':
    case 'bun':
      if (sub === 'test' || sub === 't') return true;
      if (sub === 'run') return words0[1] !== undefined && scriptNames.test(words0[1]);
      if (sub === 'exec' || sub === 'dlx' || sub === 'x') return segmentRunsSuite(afterRunner(args.slice(args.indexOf(sub) + 1)), depth);
      return sub !== undefined && directRunners.has(sub) && args[0] === sub && segmentRunsSuite(args, depth);
    case 'npx':
    case 'pnpx':
    case 'bunx':
      return segmentRunsSuite(afterRunner(args), depth);
    case 'node':
      return args.includes('--test');
    case 'deno':
      return sub === 'test';
    case 'vitest':
      return sub === undefined || !['init', 'list', 'bench'].includes(sub);
    case 'go':
      return sub === 'test' || sub === 'vet';
    case 'cargo':
      return sub === 'test' || sub === 'check' || sub === 'nextest';
    case 'make':
    case 'mvn':
    case 'mvnw':
    case 'gradle':
    case 'gradlew':
      return words0.some((word) => word === 'test' || word === 'check' || word === 'verify');
    case 'dotnet':
    case 'mix':
    case 'swift':
      return sub === 'test';
    case 'bundle':
      return sub === 'exec' && segmentRunsSuite(args.slice(args.indexOf('exec') + 1), depth);
    default:
      if (/^python(\d+(\.\d+)?)?$/.test(program)) {
        const module = args.indexOf('-m');
        return module !== -1 && (args[module + 1] === 'pytest' || args[module + 1] === 'unittest');
      }
      return directRunners.has(program);
  }
};

/** A set of simple-command indices, or `all`: the commands whose success a part's success implies (`all`: it never succeeds). */
type Implied = Set<number> | 'all';

const union = (left: Implied, right: Implied): Implied => (left === 'all' || right === 'all' ? 'all' : new Set([...left, ...right]));
const intersection = (left: Implied, right: Implied): Implied => {
  if (left === 'all') return right;
  if (right === 'all') return left;
  return new Set([...left].filter((index) => right.has(index)));
};

/** A command that never exits 0 (`false`, `exit 1`): an `||` before it keeps what its left side implies. */
const neverSucceeds = (words: readonly string[]): boolean => {
  const real = unwrap(words);
  if (real[0] === 'false') return true;
  return (real[0] === 'exit' || real[0] === 'return') && real[1] !== undefined && /^\d+$/.test(real[1]) && Number(real[1]) % 256 !== 0;
};

/** `exit N` with N not 0: the shell ends there, failing. */
const isExit = (words: readonly string[]): boolean => {
  const real = unwrap(words);
  return real[0] === 'exit' && neverSucceeds(real);
};

/** `exit 0`, a bare `exit`, `return`, or an `exec` before the end: the shell may stop there with success, the suite unrun. */
const endsTheShell = (words: readonly string[], last: boolean): boolean => {
  const first = words.find((word) => !isAssignment(word));
  if (first === 'exec') return !last;
  return (first === 'exit' || first === 'return' || first === 'logout') && !neverSucceeds(words);
};

interface ShellOptions {
  errexit: boolean;
  pipefail: boolean;
}

/** What `set` does to `-e` and `-o pipefail` (`set -euo pipefail`, `set -o errexit`, `set +e`). */
const applySet = (words: readonly string[], options: ShellOptions): void => {
  if (words[0] !== 'set') return;
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    const on = word.startsWith('-');
    if (!on && !word.startsWith('+')) continue;
    const letters = word.slice(1);
    if (/^[a-zA-Z]+$/.test(letters)) {
      if (letters.includes('e')) options.errexit = on;
      if (letters.endsWith('o')) {
        const name = words[index + 1];
        if (name === 'pipefail') options.pipefail = on;
        if (name === 'errexit') options.errexit = on;
        index++;
      }
    }
  }
};

const runsTestSuiteAt = (command: string, depth: number): boolean => {
  const parsed = parseShell(command);
  if (!parsed.ok) return false;
  const { segments, operators } = parsed;
  if (segments.some((segment) => reservedWords.has(segment.words[0] ?? ''))) return false;
  if (segments.some((segment) => exitRewriting.has(baseName(unwrap(segment.words)[0] ?? '')) || segment.words.some((word) => startupFiles.test(word)))) return false;
  if (segments.some((segment, index) => endsTheShell(segment.words, index === segments.length - 1))) return false;
  const runners = new Set<number>();
  segments.forEach((segment: ShellSegment, index) => {
    if (segmentRunsSuite(segment.words, depth)) runners.add(index);
  });
  if (runners.size === 0) return false;

  // Group the flat line: lists (`;`, `&`, newline) of and-or chains (`&&`, `||`) of pipelines (`|`, `|&`).
  const options: ShellOptions = { errexit: false, pipefail: false };
  let settled: Implied = new Set();
  let index = 0;
  while (index < segments.length) {
    let chain: Implied | undefined;
    let joiner: string | undefined;
    let pipelines = 0;
    let previousJoiner: string | undefined;
    let exits = false;
    let end = index;
    const alone: number[] = [];
    for (;;) {
      const pipelineStart = end;
      while (operators[end] === '|' || operators[end] === '|&') end++;
      if (pipelineStart === end) alone.push(end);
      let pipeline: Implied = new Set([end]);
      if (neverSucceeds(segments[end]!.words)) pipeline = 'all';
      if (options.pipefail) for (let member = pipelineStart; member < end; member++) pipeline = union(pipeline, new Set([member]));
      pipelines++;
      exits = isExit(segments[end]!.words);
      previousJoiner = joiner;
      chain = chain === undefined ? pipeline : joiner === '&&' ? union(chain, pipeline) : intersection(chain, pipeline);
      joiner = operators[end];
      end++;
      if (joiner !== '&&' && joiner !== '||') break;
    }
    const background = joiner === '&';
    const last = end >= segments.length;
    const implied: Implied = background ? new Set() : chain!;
    if (last) settled = union(settled, implied);
    // Going on past `… || exit 1` means what came before it succeeded; under `set -e`, past a lone pipeline too.
    else if (!background && exits && previousJoiner === '||') settled = union(settled, implied);
    else if (options.errexit && !background && pipelines === 1) settled = union(settled, implied);
    // `set` in a pipeline or in the background runs in a subshell and changes nothing here; in a chain it may not run.
    if (!background && pipelines === 1) for (const member of alone) applySet(segments[member]!.words, options);
    index = end;
  }
  if (settled === 'all') return false;
  const implied = settled;
  return [...runners].every((runner) => implied.has(runner));
};
