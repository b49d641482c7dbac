import fc from 'fast-check';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { shellSubject } from '../../src/policy/shell-subject.js';
import { propertyRuns } from '../support/temp-dir.js';

/*
 * Issue 30 B6: `--approve 'bash:*'` paused every pipeline or list as "chained: never allowed automatically". A line
 * of several commands is judged part by part: allowed when every part is (a read-only command, or one an allow rule
 * covers as it would cover that command alone), while a deny rule, an ask rule, a part no rule covers, and a part
 * whose programs rein cannot name (issue 25 §3) still decide.
 */

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'rein-pipeline-parts-')));
mkdirSync(join(workspace, 'src'));
writeFileSync(join(workspace, 'package.json'), '{"scripts":{"test":"node --test"}}\n');
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

const bash = { name: 'bash', annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true }, risk: 'execute' as const };
const decide = (command: string, rules: string[], options: { approveAll?: boolean; grants?: string[] } = {}) =>
  new PermissionPolicy({ rules, approveAll: options.approveAll ?? false }).decide({
    tool: bash,
    subject: shellSubject(command, { workspace, cwd: workspace }),
    ...(options.grants ? { grants: options.grants.map((grant) => new PermissionPolicy({ rules: [grant] }).rules[0]!) } : {}),
  });

describe('a pipeline or list is judged part by part (issue 30 B6)', () => {
  it('the two lines of the report run under --approve bash:*', () => {
    expect(decide('cat package.json | grep test', ['allow bash:*'])).toMatchObject({ decision: 'allow' });
    expect(decide('node --test 2>&1 | tail -5', ['allow bash:*'])).toMatchObject({ decision: 'allow', rule: 'allow bash:*', source: 'rule' });
  });

  it('a pipeline of read-only commands needs no rule, as each of its commands needs none', () => {
    expect(decide('cat package.json | grep test', [])).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(decide('git log --oneline | head -3 && ls src | wc -l', [])).toMatchObject({ decision: 'allow', source: 'mode' });
  });

  it('each part must be allowed: a rule that covers one part does not cover the next', () => {
    expect(decide('node --test 2>&1 | tail -5', ['allow bash:node --test*'])).toMatchObject({ decision: 'allow', rule: 'allow bash:node --test*' });
    const asked = decide('node --test && npm publish', ['allow bash:node --test*']);
    expect(asked).toMatchObject({ decision: 'ask', source: 'mode' });
    expect(asked.reason).toContain('"npm publish"');
    expect(decide('npm test; node --test', ['allow bash:node --test*', 'allow bash:npm test'])).toMatchObject({ decision: 'allow', rule: 'allow bash:npm test + allow bash:node --test*' });
  });

  it('a part in a class no wildcard allows (delete, network, install, outside the workspace) asks, as it would alone', () => {
    for (const line of ['ls | xargs rm', 'cat package.json && curl -s http://example.com', 'npm install && npm test', 'cat /etc/passwd | head', 'cd .. && ls']) {
      const verdict = decide(line, ['allow bash:*']);
      expect(verdict.decision, line).toBe('ask');
      expect(verdict.reason, line).toMatch(/never allowed automatically/);
    }
    // … unless an exact rule names that part, as it would name the command alone.
    expect(decide('npm install && npm test', ['allow bash:npm install', 'allow bash:npm test'])).toMatchObject({ decision: 'allow' });
  });

  it('a part that writes through a redirection is covered only by a rule that names the redirection, as the command alone would be', () => {
    expect(decide('npm test 2>&1 | tail -5', ['allow bash:npm test'])).toMatchObject({ decision: 'allow' });
    expect(decide('npm test > out.txt | tail -5', ['allow bash:npm test']).decision).toBe('ask');
    expect(decide('npm test > out.txt | tail -5', ['allow bash:npm test*'])).toMatchObject({ decision: 'allow' });
  });

  it('a program reached through a variable is judged as that program', () => {
    expect(decide('c=rm; $c package.json | cat', ['allow bash:*']).decision).toBe('ask');
    expect(decide('c=cat; $c package.json | grep test', ['allow bash:*']).decision).toBe('allow');
  });

  it('a part whose programs rein cannot name is never allowed by a wildcard, and is denied while a deny rule is in force', () => {
    for (const line of ['cat package.json | node -e "require(\'fs\').rmSync(\'f\')"', 'ls && python3 -c "import os"', 'IFS=_; c=rm_f; $c | cat', "ls | awk 'BEGIN{system(\"rm f\")}'", 'trap "rm f" EXIT; ls | wc -l']) {
      expect(decide(line, ['allow bash:*']).decision, line).toBe('ask');
      expect(decide(line, ['allow bash:*', 'deny bash:rm *'], { approveAll: true }).decision, line).toBe('deny');
    }
  });

  it('a deny rule on one part denies the line; an ask rule on one part asks', () => {
    expect(decide('cat package.json | grep test && rm -f package.json', ['allow bash:*', 'deny bash:rm *'], { approveAll: true })).toMatchObject({ decision: 'deny', source: 'rule' });
    expect(decide('cat package.json | grep test', ['allow bash:*', 'ask bash:grep *'])).toMatchObject({ decision: 'ask', source: 'rule' });
  });

  it('a session grant covers the part it names, as an allow rule does', () => {
    expect(decide('node --test | tail -5', [], { grants: ['allow bash:node --test'] })).toMatchObject({ decision: 'allow', source: 'session' });
    expect(decide('node --test | sort -o out.txt', [], { grants: ['allow bash:node --test'] }).decision).toBe('ask');
  });
});

/** Parts by what a policy of `allow bash:*` + `deny bash:rm *` must make of them. */
const readOnlyParts = ['cat package.json', 'grep test', 'tail -5', 'wc -l', 'ls src', 'head -n 3 package.json', 'git status', 'sort', 'uniq -c'];
const coveredParts = ['node --test', 'npm test', 'node --test 2>&1', 'make -n', 'tsc --noEmit'];
const deniedParts = ['rm -f package.json', '/bin/rm x', 'command rm x', 'env rm x', 'xargs rm', 'x=rm; $x f', 'find . -exec rm {} +'];
const unknownParts = ['node -e "process.exit(0)"', 'python3 -c "print(1)"', 'sed -n "1e ls" package.json', "awk 'BEGIN{system(\"ls\")}'", 'IFS=_; c=ls_x; $c', 'source /dev/stdin', 'perl -e 1'];
const riskyParts = ['curl -s http://example.com', 'npm install left-pad', 'cat /etc/hostname', 'git push', 'sudo ls', 'cd /'];

const line = (parts: readonly string[], joins: readonly string[]): string => parts.reduce((text, part, index) => (index === 0 ? part : `${text} ${joins[(index - 1) % joins.length]} ${part}`), '');
const joiners = fc.array(fc.constantFrom('|', '&&', '||', ';'), { minLength: 1, maxLength: 4 });

describe('composed lines (property)', () => {
  it('any denied part denies, any unknown part denies under a deny rule and asks without one, a risky part asks; all allowed parts allow', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(...[readOnlyParts, coveredParts, deniedParts, unknownParts, riskyParts].map((pool, kind) => fc.constantFrom(...pool).map((part) => ({ part, kind })))), { minLength: 2, maxLength: 5 }),
        joiners,
        fc.boolean(),
        (parts, joins, yes) => {
          const command = line(parts.map((entry) => entry.part), joins);
          const kinds = new Set(parts.map((entry) => entry.kind));
          const withDeny = decide(command, ['allow bash:*', 'deny bash:rm *'], { approveAll: yes });
          const withoutDeny = decide(command, ['allow bash:*'], { approveAll: yes });
          if (kinds.has(2)) expect(withDeny.decision, command).toBe('deny');
          if (kinds.has(3)) {
            expect(withDeny.decision, command).toBe('deny');
            expect(withoutDeny.decision, command).toBe(yes ? 'allow' : 'ask');
            if (yes) expect(withoutDeny.source, command).toBe('pre-approved');
          }
          if (kinds.has(4) && !kinds.has(2) && !kinds.has(3)) {
            expect(withDeny.decision, command).toBe(yes ? 'allow' : 'ask');
            if (yes) expect(withDeny.source, command).toBe('pre-approved');
          }
          if (!kinds.has(2) && !kinds.has(3) && !kinds.has(4)) {
            expect(withDeny, command).toMatchObject({ decision: 'allow' });
            expect(withDeny.source, command).not.toBe('pre-approved');
            expect(withoutDeny.source, command).not.toBe('pre-approved');
          }
          // Without any allow rule, only read-only parts run unasked.
          const bare = decide(command, []);
          expect(bare.decision === 'allow', command).toBe([...kinds].every((kind) => kind === 0));
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});
