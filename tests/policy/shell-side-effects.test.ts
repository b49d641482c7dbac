import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { sedScriptEffect } from '../../src/policy/shell-side-effects.js';
import { propertyRuns } from '../support/temp-dir.js';

const where = { workspace: '/work/project', cwd: '/work/project' };
const classes = (command: string) => classifyShellCommand(command, where).classes;

// A shell word that survives quoting as is: single quotes around text without a single quote.
const quote = (text: string) => `'${text}'`;

/** sed commands that only read the input and print. */
const printOnly = fc.constantFrom('p', 'd', '=', 'n', 'N', 'h', 'G', 'x', 'q', 'l', 's/a/b/', 's/a/b/g', 's|x|y|2p', 's/w/e/gI', 'y/ab/ba/', '/re/p', '1,3d', '$p', '/x/,/y/{p}', '2!d', 's/\\/w/e/');
/** sed commands (or `s` flags) that run a command, write a file or read one the classifier cannot judge. */
const acting = fc.constantFrom('e touch pwned', '1e touch pwned', 's/a/b/e', 's/a/b/w out.txt', 's/a/b/gw out.txt', 'w out.txt', '1w /tmp/out', 'W out.txt', 'r /etc/passwd', 'R other.txt', '$e id', '/x/e id');

describe('provably read-only commands (D20)', () => {
  it.each([
    ["sed -n '1e touch /tmp/pwned' a.txt", 'unparseable'],
    ["sed -n '1w /tmp/pwned' a.txt", 'write'],
    ["sed -n 'w w.txt' a.txt", 'write'],
    ["sed 's/x/y/w out' a.txt", 'write'],
    ["sed -e p -e '1e id' a.txt", 'unparseable'],
    ["sed --expression='1e id' a.txt", 'unparseable'],
    ['sed -f script.sed a.txt', undefined],
    ['sort --compress-program=touch -S 1 a.txt', 'unparseable'],
    ['sort --compress=touch a.txt', 'unparseable'],
    ['sort -uo out.txt a.txt', 'write'],
    ['git diff --output=gd.txt', 'write'],
    ['git log --output=gl.txt', 'write'],
    ["git grep --open-files-in-pager='touch ggp.txt; true' hi", 'unparseable'],
    ["git grep -O'touch x' hi", 'unparseable'],
    ['git diff --ext-diff', 'unparseable'],
    ['git reflog expire --all', 'delete'],
    ['git --config-env=core.fsmonitor=SHELL status', undefined],
    ['git --config-env core.fsmonitor=SHELL status', undefined],
    ['git -c core.fsmonitor=./2 status', undefined],
    ['git -c diff.external=./x diff', undefined],
    ['git --exec-path=. log', undefined],
    ['git --git-dir=/elsewhere/.git log', undefined],
    ['git -C .. status', undefined],
    ['date -s 2020-01-01', 'privileged'],
    ['date --set=2020-01-01', 'privileged'],
    ['date 0101000020', 'privileged'],
    ['hostname evil', 'privileged'],
    ["rg --pre 'touch x' foo", 'unparseable'],
    ['rg --pre=./x foo', 'unparseable'],
    ['less -o copy.txt a.txt', 'write'],
    ["less '+!touch x' a.txt", 'unparseable'],
    ['tree -o listing.txt', 'write'],
    ['uniq a.txt b.txt', 'write'],
    ['xxd a.bin b.hex', 'write'],
    ['file -C -m magic', 'write'],
    ['GIT_EXTERNAL_DIFF=./x git diff', undefined],
    ["LESSOPEN='|./x %s' less a.txt", undefined],
  ])('%s is not read-only (%s)', (command, added) => {
    const result = classes(command);
    expect(result).not.toContain('read-only');
    if (added) expect(result).toContain(added);
  });

  it.each(['sed -n 1,5p a.txt', "sed 's/a/b/g' a.txt", 'sed -ne 2p a.txt', 'sort -u a.txt', 'sort -k2 -t, a.txt', 'git diff --stat', 'git log --oneline -5', 'git grep -n hi', 'date +%s', 'date -u', 'hostname', 'rg -n foo src', 'less a.txt', 'tree -L 2', 'uniq -c a.txt', 'xxd a.bin', 'file a.txt', 'LC_ALL=C sort a.txt', 'git reflog', 'git --no-pager log -3', 'git -P diff --stat'])('%s stays read-only', (command) => {
    expect(classes(command)).toEqual(['read-only']);
  });

  it('a sed script is read-only only when every command in it only prints, wherever the acting one is', () => {
    fc.assert(
      fc.property(fc.array(printOnly, { maxLength: 4 }), acting, fc.array(printOnly, { maxLength: 4 }), fc.constantFrom(';', '\n'), fc.boolean(), (before, act, after, separator, asOption) => {
        const script = [...before, act, ...after].join(separator);
        expect(sedScriptEffect(script)).toBeDefined();
        const command = asOption ? `sed -n -e ${quote(script)} a.txt` : `sed -n ${quote(script)} a.txt`;
        expect(classes(command)).not.toContain('read-only');
      }),
      { numRuns: propertyRuns(300) },
    );
    fc.assert(
      fc.property(fc.array(printOnly, { minLength: 1, maxLength: 6 }), fc.constantFrom(';', '\n'), (parts, separator) => {
        expect(sedScriptEffect(parts.join(separator))).toBeUndefined();
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('calls a sed script print-only only when GNU sed --sandbox (which refuses e, r and w) accepts it too', () => {
    // The oracle is the real sed: in sandbox mode it refuses every script with a command that runs, reads or writes.
    const unit = fc.constantFrom('e', 'w', 'W', 'r', 'R', 's', 'y', '/', '|', ';', '\n', ' ', 'p', 'd', '1', '$', '{', '}', '\\', 'x', 'g', '!', ',', '#', 'a', ':', 'b', 'q');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 14 }), (script) => {
        if (sedScriptEffect(script) !== undefined) return;
        const run = spawnSync('sed', ['--sandbox', '-n', script], { input: 'a\nb\n', encoding: 'utf8' });
        expect(run.stderr).not.toMatch(/sandbox/);
      }),
      { numRuns: propertyRuns(400) },
    );
  });

  it('every acting option of a listed reader keeps it from being read-only, whatever else the line holds', () => {
    const acts = fc.constantFrom('sort --compress-program=sh a', 'sort -o o a', 'git diff --output=x', 'git grep -Ocat x', 'date -s 1', 'rg --pre ./p x', 'less -o f a', 'tree -o f', 'uniq a b', "sed '1e id' a", 'sed w\\ f a');
    const readers = fc.array(fc.constantFrom('ls', 'cat a', 'git status', 'sed -n p a', 'sort a', 'date'), { maxLength: 3 });
    fc.assert(
      fc.property(readers, acts, readers, fc.constantFrom('&&', '||', ';', '|'), (before, act, after, operator) => {
        const line = [...before, act, ...after].join(` ${operator} `);
        expect(classes(line)).not.toContain('read-only');
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
