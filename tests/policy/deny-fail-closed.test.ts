import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScriptedSession } from 'rein/testing';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { commandsRun } from '../../src/policy/shell-commands.js';
import { makeTempDir } from '../support/temp-dir.js';

const where = { workspace: '/work/project', cwd: '/work/project' };
const bash = { name: 'bash', annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true }, risk: 'execute' as const };
/** The verdict for `command` under `deny bash:rm *` and `--yes`, as the trial ran it. */
const decide = (command: string, rule = 'deny bash:rm *') => {
  const classified = classifyShellCommand(command, where);
  return new PermissionPolicy({ rules: [rule], approveAll: true }).decide({ tool: bash, subject: { target: command, parts: classified.parts, classes: classified.classes, run: commandsRun(command) } });
};

describe('a bash deny rule fails closed on a line whose programs rein cannot name (issue 25 §3)', () => {
  // The five spellings the security trial ran past `--deny 'bash:rm *' --yes` on main 3c77950.
  it.each([
    'IFS=_; c=rm_f24; $c',
    'source /dev/stdin <<< "rm f26"',
    'trap "rm f32" EXIT; true',
    'sed -n "1e rm f40" f1',
    `awk 'BEGIN{system("rm f39")}'`,
  ])('the trial spelling %j is denied, not pre-approved', (line) => {
    const verdict = decide(line);
    expect(verdict.decision).toBe('deny');
    expect(verdict.source).toBe('rule');
  });

  it.each([
    // IFS and other variables that change what bash runs, set in any way.
    'IFS=_ ; c=rm_f; $c',
    'export IFS=_; c=rm_f; $c',
    'read IFS <<< _; c=rm_f; $c',
    "PS4='$(rm f)' bash -xc true",
    'BASH_ENV=/dev/stdin bash build.sh <<< "rm f"',
    'GIT_EXTERNAL_DIFF=rm git diff',
    'GIT_PAGER="rm f" git -p log',
    `NODE_OPTIONS='--import=data:text/javascript,1' node app.js`,
    'TAR_OPTIONS=--to-command=rm tar xf a.tar',
    // Variables whose value the line does not tell for sure.
    'c=r; c+=m; $c f',
    'c=rm; false && c=ls; $c f',
    'c=ls; read c <<< rm; $c f',
    'c=ls; printf -v c rm; $c f',
    'declare -n r=c; c=rm; $r f',
    'c=ls; eval c=rm; $c f',
    'c=ls; source vars.sh; $c f',
    'for c in ls rm; do $c f; done',
    "x='a[$(rm f)]'; echo $((x))",
    // Programs and scripts read from a stream or a computed path.
    'bash /dev/stdin <<< "rm f"',
    'sh /proc/self/fd/0 <<< "rm f"',
    'echo "rm f" | bash -s x',
    'echo "rm f" | bash -',
    '. /dev/fd/3 3<<< "rm f"',
    'source <(echo rm f)',
    'source "$F"',
    'bash --rcfile /dev/stdin -i <<< "rm f"',
    'make -f /dev/stdin <<< "all:; rm f"',
    'make --eval="all:; rm f"',
    // sed's e command and e flag, in every way of giving sed its script.
    "sed 's/x/rm f/e' list",
    "sed -e 'w out' -e '1e rm f' list",
    "sed --expression='1e rm f' list",
    "sed -n -f /dev/stdin list <<< '1e rm f'",
    'sed "$S" list',
    // Inline code that can run commands.
    `awk '{ print | "sh" }' list`,
    `awk '{ "date" | getline d }' list`,
    `gawk 'BEGIN { f = "system"; @f("rm f") }'`,
    `busybox awk 'BEGIN{system("rm f")}'`,
    'p=$(cat prog.awk); awk "$p" list',
    `awk -f /dev/stdin list <<< 'BEGIN{system("rm f")}'`,
    `perl -e 'unlink "f"'`,
    `perl -lane 'system("rm f")' list`,
    `perl -I lib -e 'system("rm f")'`,
    `perl -MPOSIX -we 'POSIX::remove("f")'`,
    `python3 -c 'import os; os.remove("f")'`,
    `python -Ic 'import os'`,
    `python3 - <<< 'import os; os.remove("f")'`,
    `echo 'import os' | python3`,
    `node -e 'require("fs").rmSync("f")'`,
    `node -p 'require("fs").rmSync("f")'`,
    `node --eval='require("fs").rmSync("f")'`,
    `node --import 'data:text/javascript,import("fs").then(f=>f.rmSync("f"))' app.js`,
    `ruby -e 'File.delete("f")'`,
    `ruby -ne 'system("rm f")' list`,
    `php -r 'unlink("f");'`,
    `lua -e 'os.remove("f")'`,
    `deno eval 'Deno.removeSync("f")'`,
    `bun -e 'require("fs").rmSync("f")'`,
    `Rscript -e 'file.remove("f")'`,
    "echo '!rm f' | ed -s list",
    "vim -c '!rm f' -c q list",
    // Programs named only in another program's options.
    'tar --to-command=rm -xf a.tar',
    'tar -I "rm f" -xf a.tar',
    'rsync -e "rm f" a b:',
    'git -c core.pager="rm f" -p log',
    'git -c diff.external=rm diff',
    'git --config-env=core.sshCommand=X fetch',
    'rg --pre rm pattern .',
    'sort --compress-program=rm big.txt',
    'git diff --ext-diff',
    "ssh -o ProxyCommand='rm f' host",
    'hash -p /bin/rm ls; ls f',
    'enable -f ./evil.so rm2; rm2 f',
    "psql -c '\\! rm f'",
  ])('%j is denied', (line) => {
    expect(decide(line).decision, line).toBe('deny');
  });

  it('an unparseable line is denied while a bash deny rule is in force, and says why', () => {
    for (const line of ['echo "unterminated', 'ls $[1+1]', 'echo $(rm f']) {
      const verdict = decide(line);
      expect(verdict.decision, line).toBe('deny');
      expect(verdict.reason, line).toMatch(/cannot be checked against this command/);
    }
  });

  it.each([
    // Text processing that runs nothing else stays to the rest of the policy.
    "awk '{ print $1, $NF }' list",
    "awk -F: '$3 > 1000 { n++ } END { print n }' /etc/passwd",
    "awk -v x=1 -- '{ print x }' list",
    'awk -f report.awk list',
    "sed -n 's/alpha/beta/p' list",
    "sed -i 's/a/b/g' list",
    "sed -e 's/a/b/' -e 'w out' list",
    'sed -f edit.sed list',
    // A script file run by its interpreter is not read (the documented limit).
    'python3 tool.py --check',
    'python3 -m pytest -q',
    'perl script.pl',
    'ruby -Ilib test/all.rb',
    'node --test',
    'node dist/cli.js run',
    'node -r ./register.js app.js',
    'bun run build',
    'deno run main.ts',
    'npm test',
    'make check',
    'bash build.sh',
    'source ./env.sh',
    '. ./venv/bin/activate',
    // Ordinary lines.
    'python3 --version',
    'trap - INT',
    "trap '' INT; ls",
    'x=git; $x status',
    'c=ls; c=ls; $c',
    'git -c color.ui=always log',
    'git -c user.name=rein commit -m msg',
    "git commit -m 'use $(foo) carefully'",
    'tar -xzf a.tgz',
    'rsync -a src/ dst/',
    "psql -c 'select 1'",
  ])('%j is left to the rest of the policy', (line) => {
    const verdict = decide(line);
    expect(verdict.decision, `${line}: ${verdict.reason}`).toBe('allow');
  });

  it('names, part by part, where the line runs something it does not name (for a judgement per pipeline part)', () => {
    const run = commandsRun(`npm test && awk 'BEGIN{system("x")}' | tail -3`);
    expect(run.unknown).toEqual([{ command: `awk BEGIN{system("x")}`, reason: 'the awk program calls system()' }]);
    expect(run.hidden).toBe('the awk program calls system()');
    expect(commandsRun('npm test | tail -3').unknown).toBeUndefined();
  });

  it('holds for any deny rule over bash, not only one that names rm', () => {
    expect(decide(`python3 -c 'print(1)'`, 'deny bash:git push*').decision).toBe('deny');
    // No deny rule: such a line is an ordinary command (asked, or answered by --yes).
    const classified = classifyShellCommand(`python3 -c 'print(1)'`, where);
    const verdict = new PermissionPolicy({ approveAll: true }).decide({ tool: bash, subject: { target: 'x', parts: classified.parts, classes: classified.classes, run: commandsRun(`python3 -c 'print(1)'`) } });
    expect(verdict.decision).toBe('allow');
  });
});

describe('the trial, end to end: real bash under --deny "bash:rm *" --yes', () => {
  it('none of the five spellings removes its file; each is recorded as denied by the rule', async () => {
    const workspace = await makeTempDir('rein-deny-closed-');
    try {
      const lines = ['IFS=_; c=rm_f24; $c', 'source /dev/stdin <<< "rm f26"', 'trap "rm f32" EXIT; true', 'sed -n "1e rm f40" f1', `awk 'BEGIN{system("rm f39")}'`];
      for (const name of ['f1', 'f24', 'f26', 'f32', 'f39', 'f40']) await writeFile(join(workspace.path, name), `${name}\n`);
      const run = await runScriptedSession({
        workspace: workspace.path,
        script: { turns: [{ text: 'Cleaning up.', toolCalls: lines.map((command) => ({ name: 'bash', arguments: { command } })) }, { text: 'Done.' }] },
        rein: { permissions: { rules: ['deny bash:rm *'], approveAll: true }, sandbox: { loginShell: false } },
      });
      expect(run.result.status).toBe('completed');
      const decided = run.records.filter((record) => record.type === 'permission.decided').map((record) => record.data as { decision: string; source: string; rule: string });
      expect(decided).toHaveLength(5);
      for (const verdict of decided) expect(verdict).toMatchObject({ decision: 'deny', source: 'rule', rule: 'deny bash:rm *' });
      expect(run.records.some((record) => record.type === 'tool.started')).toBe(false);
      expect((await readdir(workspace.path)).sort()).toEqual(['f1', 'f24', 'f26', 'f32', 'f39', 'f40']);
    } finally {
      await workspace.remove();
    }
  });
});
