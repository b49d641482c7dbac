import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultVerificationClassifier } from '../../src/effects/verification.js';
import { runsTestSuite } from '../../src/effects/test-command.js';

const runs = Number(process.env.FC_RUNS ?? 50);

const runners = ['npm test', 'npm run test', 'npm run test:unit', 'npx vitest run', 'npx --yes vitest', 'vitest run', 'pytest -q', 'python3 -m pytest', 'go test ./...', 'cargo test', 'node --test', 'make check', 'yarn test', 'pnpm -r test', 'jest', 'npx tsc --noEmit'];
const runner = fc.constantFrom(...runners);
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

describe('a verification is a line that runs a suite and reports its exit (D7)', () => {
  it('runs: the program word and its subcommand, after assignments, wrappers, `cd x &&` and redirections', () => {
    for (const line of [
      'npm test', 'npm t', 'npm -s test', 'CI=1 npm test', 'env CI=1 npm run test', 'cd app && npm test', 'cd app && CI=1 npx vitest run 2>&1',
      'timeout 600 pytest -x', 'time go test ./...', 'node --test', 'node --test --test-reporter=tap', './node_modules/.bin/vitest run', 'python -m unittest discover',
      'cargo test --all', 'make -C lib test', './gradlew test', 'mvn -q verify', 'npm test && echo ok', 'npm test || exit 1', 'set -o pipefail; npm test | tail -5',
      'set -e; npm test; echo done', "bash -c 'cd app && npm test'", 'npm test >/dev/null 2>&1', 'npm test\n', 'npm ci && npm test',
    ]) expect(runsTestSuite(line), line).toBe(true);
  });

  it('only mentions: echo, grep, cat, help, version or listing calls, a runner as an argument', () => {
    for (const line of [
      'echo skipping npm test', 'grep -c pytest x.js || true', 'cat vitest.config.js 2>/dev/null; true', 'npm test --help >/dev/null 2>&1; true', 'echo tests use vitest',
      'npm test --help', 'npx vitest --version', 'pytest --collect-only', 'go test -list .', 'npm help test', 'git log --grep "npm test"', 'ls node_modules/.bin/vitest',
      'npm install vitest', 'npm run build', 'go build ./...', 'vitest init', 'printf "%s\\n" "node --test"', 'which pytest', 'cat package.json | grep test',
    ]) expect(runsTestSuite(line), line).toBe(false);
  });

  it('a masked exit is not the suite\'s: `|| true`, `; true`, a pipe, the background, negation, a later command, control flow', () => {
    for (const line of [
      'node --test || true', 'npm test; true', 'npm test || :', 'npm test | tail -5', 'npm test 2>&1 | tee log', 'npm test &', '! npm test', 'npm test; echo done',
      'npm test; exit 0', 'npm test || pytest', 'npm test; pytest', 'npm test && false', 'set -e; npm test | tail', 'set -o pipefail; set +o pipefail; npm test | tail', 'set -o pipefail & npm test | tail', 'set -e | true; npm test; true', 'false && set -e; npm test; true',
      'if npm test; then echo ok; fi', 'for f in a b; do pytest $f; done', '(cd app && npm test)', 'echo $(npm test)', 'npm test || true # keep going', 'npm test & wait', 'exit 0 && npm test', 'exit; npm test', 'exec true; npm test',
      // Trial 7 G11: builtins that rewrite the exit status or the commands, and start-up files that may hold a trap.
      "trap 'exit 0' EXIT; node --test", "trap 'exit 0' ERR; set -e; npm test", 'alias npm=true; npm test', 'eval npm test', 'BASH_ENV=x.sh bash -c "npm test"', "bash -c \"trap 'exit 0' EXIT; npm test\"",
    ]) expect(runsTestSuite(line), line).toBe(false);
  });

  it('a runner named inside any argument of echo, grep, cat, printf or ls is never a verification', () => {
    const mention = fc.tuple(fc.constantFrom('echo', 'grep -c', 'cat', 'printf %s', 'ls', 'head -1', 'git log --grep'), fc.string({ maxLength: 20 }), runner, fc.string({ maxLength: 20 }), fc.boolean());
    fc.assert(
      fc.property(mention, ([program, before, name, after, quoted]) => {
        const text = `${before} ${name} ${after}`;
        const line = `${program} ${quoted ? quote(text) : text.replace(/[^A-Za-z0-9 ._:/-]/g, '')}`;
        return defaultVerificationClassifier({ name: 'bash', arguments: { command: line } }) === undefined;
      }),
      { numRuns: runs * 4 },
    );
  });

  it('never throws, whatever the line', () => {
    fc.assert(fc.property(fc.string({ maxLength: 80 }), (line) => typeof runsTestSuite(line) === 'boolean'), { numRuns: runs * 4 });
    fc.assert(
      fc.property(fc.array(fc.constantFrom('npm', 'test', '&&', '||', ';', '|', '&', '(', ')', '"', "'", '\\', '$(', '`', '-c', 'bash', 'set', '-e', '-o', 'pipefail', '\n', '#', 'exit', '1', '!'), { maxLength: 16 }), (words) => typeof runsTestSuite(words.join(' ')) === 'boolean'),
      { numRuns: runs * 4 },
    );
  });

  it('against bash itself: whenever a line is classified as a verification, a failing suite makes the line fail', () => {
    // The runners are shell functions here, so bash decides the exit; a classified line whose suite fails must not exit 0.
    const atom = fc.constantFrom('npm test', 'pytest -q', 'node --test', 'true', 'false', 'echo x', 'exit 0', 'exit 3', 'cat /dev/null', 'set -e', 'set -o pipefail', 'set +e', 'grep -q npm /dev/null', "trap 'exit 0' EXIT", "trap 'exit 0' ERR");
    const joiner = fc.constantFrom(' && ', ' || ', '; ', ' | ', '\n', ' & ');
    const line = fc.tuple(atom, fc.array(fc.tuple(joiner, atom), { maxLength: 5 })).map(([first, rest]) => first + rest.map(([join, next]) => join + next).join(''));
    const prelude = 'npm() { return $SUITE; }; pytest() { return $SUITE; }; node() { return $SUITE; }\n';
    fc.assert(
      fc.property(line, (command) => {
        if (!runsTestSuite(command)) return true;
        const failing = spawnSync('bash', ['-c', prelude + command], { env: { ...process.env, SUITE: '1' }, stdio: 'ignore', timeout: 10_000 });
        return failing.status !== 0;
      }),
      { numRuns: runs * 4 },
    );
  });
});
