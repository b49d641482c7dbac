import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { commandsRun } from '../../src/policy/shell-commands.js';
import { propertyRuns } from '../support/temp-dir.js';

const where = { workspace: '/work/project', cwd: '/work/project' };
const bash = { name: 'bash', annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true }, risk: 'execute' as const };
const decide = (rules: string[], command: string) => {
  const classified = classifyShellCommand(command, where);
  return new PermissionPolicy({ rules: rules.map((rule) => `deny ${rule}`), approveAll: true }).decide({ tool: bash, subject: { target: command, parts: classified.parts, classes: classified.classes, run: commandsRun(command) } });
};

const single = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const double = (text: string) => `"${text.replace(/["\\$`]/g, (c) => `\\${c}`)}"`;
/** The line with its first word rewritten, when it starts with a plain word (otherwise unchanged). */
const program = (line: string, rewrite: (word: string, rest: string) => string) => {
  const match = /^([a-z]+)( .*)?$/s.exec(line);
  return match ? rewrite(match[1]!, match[2] ?? '') : line;
};

/** Ways to run a line that bash runs as that line (each keeps what the line runs). */
const spellings: Array<(line: string) => string> = [
  (line) => line,
  (line) => program(line, (word, rest) => `/usr/bin/${word}${rest}`),
  (line) => program(line, (word, rest) => `x=${word}; $x${rest}`),
  (line) => program(line, (word, rest) => `\\${word}${rest}`),
  (line) => program(line, (word, rest) => `"${word}"${rest}`),
  (line) => program(line, (word, rest) => `command ${word}${rest}`),
  (line) => program(line, (word, rest) => `env ${word}${rest}`),
  (line) => program(line, (word, rest) => `env -i A=1 ${word}${rest}`),
  (line) => program(line, (word, rest) => `nice -n 5 ${word}${rest}`),
  (line) => program(line, (word, rest) => `time ${word}${rest}`),
  (line) => program(line, (word, rest) => `exec ${word}${rest}`),
  (line) => program(line, (word, rest) => `nohup ${word}${rest}`),
  (line) => program(line, (word, rest) => `timeout -s KILL 5 ${word}${rest}`),
  (line) => program(line, (word, rest) => `stdbuf -oL ${word}${rest}`),
  (line) => program(line, (word, rest) => `sudo -u root ${word}${rest}`),
  (line) => program(line, (word, rest) => `X=1 ${word}${rest}`),
  (line) => program(line, (word, rest) => `echo x | xargs ${word}${rest}`),
  (line) => program(line, (word, rest) => `find . -maxdepth 0 -exec ${word}${rest} \\;`),
  (line) => `(${line})`,
  (line) => `{ ${line}; }`,
  (line) => `bash -c ${single(line)}`,
  (line) => `sh -ec ${double(line)}`,
  (line) => `eval ${single(line)}`,
  (line) => `echo $(${line})`,
  (line) => `true && ${line}`,
  (line) => `if true; then ${line}; fi`,
  (line) => `cat <<EOF | wc -l\nhello\nEOF\n${line}`,
  // Issue 25 §3: spellings whose program rein cannot name (denied while any bash deny rule is in force).
  (line) => `source /dev/stdin <<< ${single(line)}`,
  (line) => `trap ${single(line)} EXIT; true`,
  (line) => `sed -n ${single(`1e ${line.replace(/\n/g, '; ')}`)} notes.txt`,
  (line) => `awk ${single(`BEGIN{system(${JSON.stringify(line)})}`)}`,
  (line) => `python3 -c ${single(`import os; os.system(${JSON.stringify(line)})`)}`,
  (line) => `perl -e ${single(`system(${JSON.stringify(line)})`)}`,
  (line) => `node -e ${single(`require("child_process").execSync(${JSON.stringify(line)})`)}`,
];

const targets: Array<{ rule: string; words: string[] }> = [
  { rule: 'bash:git push*', words: ['git', 'push', 'origin', 'main'] },
  { rule: 'bash:rm *', words: ['rm', 'keep.txt'] },
  { rule: 'bash:curl *', words: ['curl', 'http://example.com'] },
];

describe('a bash deny rule matches the program a line runs, however it is spelled (D18)', () => {
  it('denies every spelling, nested up to three deep, even with --yes', () => {
    const spelling = fc.integer({ min: 0, max: spellings.length - 1 });
    fc.assert(
      fc.property(fc.constantFrom(...targets), fc.array(spelling, { minLength: 1, maxLength: 3 }), ({ rule, words }, chain) => {
        let line = words.join(' ');
        for (const index of chain) line = spellings[index]!(line);
        const verdict = decide([rule], line);
        expect(verdict.decision, line).toBe('deny');
      }),
      { numRuns: propertyRuns(400) },
    );
  });

  it.each([
    ['bash:git push*', 'git -C . push origin main'],
    // Trial 7 G9: the plumbing that does a push.
    ['bash:git push*', 'git send-pack ./remote.git HEAD:refs/heads/b6'],
    ['bash:git push*', 'git -C . http-push https://example.com/repo.git main'],
    ['bash:git fetch*', 'git fetch-pack ./remote.git'],
    ['bash:git push*', 'GIT_DIR=.git git push'],
    ['bash:git push*', 'git --git-dir=.git push'],
    ['bash:git push*', 'v=push; git $v'],
    ['bash:git push*', 'git $(echo push)'],
    ['bash:git push*', 'git {push,status}'],
    ['bash:rm *', 'r=$(which rm); $r f'],
    ['bash:rm *', 'echo rm f | bash'],
    ['bash:rm *', 'bash < cmds.txt'],
    ['bash:rm *', 'eval "$CMD"'],
    ['bash:rm *', 'env -S "rm f"'],
    ['bash:rm *', 'watch "rm f"'],
    ['bash:git push*', 'git -c alias.p=push p'],
    ['bash:git push*', 'P=push git --config-env=alias.p=P p'],
    ['bash:git push*', "x=bash; $x -c 'x=git; $x push origin main'"],
    ['bash:git push*', "x=eval; $x 'x=git; $x push origin main'"],
    ['bash:git push*', 'git --config-env alias.p=P p'],
    ['bash:rm *', 'diff <(rm f) x'],
  ])('%s denies %s', (rule, line) => {
    expect(decide([rule], line).decision).toBe('deny');
  });

  it.each([
    ['bash:git push*', 'git status'],
    ['bash:git push*', 'git log --oneline | head -3'],
    ['bash:git push*', 'cat <<EOF > notes.md\ngit push is for people\nEOF'],
    ['bash:git push*', 'grep -rn push src'],
    ['bash:rm *', 'echo $HOME'],
    ['bash:rm *', 'ls $(pwd)'],
    ['bash:rm *', 'bash build.sh'],
    ['bash:git push*', 'echo "$(date)" > stamp.txt'],
  ])('%s leaves %s to the rest of the policy', (rule, line) => {
    expect(decide([rule], line).decision).toBe('allow');
  });
});
