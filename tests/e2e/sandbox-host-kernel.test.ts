import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, entriesOfRows, jsonLines, type CliResult } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { requireBubblewrap } from '../support/sandbox.js';

/*
 * Issue #25 §1: a sandboxed command must never hold write access to host-global kernel state, whoever runs rein — and
 * what it may consume is bounded. rein runs a real session (scripted provider, `--sandbox required`) whose bash calls
 * run the corpus of host-global writes, `kill -9 -1`, a fork bomb and a fill of every writable tmpfs; every write is
 * refused, both bombs stop at their limits, and the session goes on. It runs as root (CI runs as root) and a second
 * time from root as an unprivileged uid through `setpriv`.
 */

const sandboxed = await requireBubblewrap();
const root = process.getuid?.() === 0;
const unprivileged = 65534;
const corpus = fileURLToPath(new URL('../fixtures/sandbox/host-kernel-corpus.sh', import.meta.url));
/** mount, ptrace, init_module, finit_module, reboot. */
const syscallNumbers: Record<string, number[]> = { x64: [165, 101, 175, 313, 169], arm64: [40, 117, 105, 273, 142], riscv64: [40, 117, 105, 273, 142], loong64: [40, 117, 105, 273, 142] };
const path = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The checkout (its `dist/` and `node_modules/`), which an unprivileged uid may not be able to reach (a clone under `/root`). */
const checkout = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
/** Where the unprivileged pass sees the checkout: an empty folder, bound over in a private mount namespace (`unshare -m`). */
const exposed = root ? mkdtempSync(join(tmpdir(), 'rein-checkout-')) : '';
if (exposed) chmodSync(exposed, 0o755);
afterAll(() => {
  if (exposed) rmdirSync(exposed);
});
const exposedCli = join(exposed, cliPath.slice(checkout.length));

/**
 * The argv prefix that runs a program as `uid` with the checkout readable at `exposed`: a private mount namespace
 * (nothing reaches the host's mounts) binds the checkout there, then setpriv drops to the uid.
 */
const asUnprivileged = (uid: number): string[] => ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount --bind "$2" "$1" && shift 2 && exec "$@"', 'expose', exposed, checkout, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--'];

/** Whether the unprivileged pass can run here (root, and bubblewrap works for that uid); in CI a refusal fails the test. */
const unprivilegedWorks = (): boolean => {
  if (!root) return false;
  const node = spawnSync(asUnprivileged(unprivileged)[0]!, [...asUnprivileged(unprivileged).slice(1), process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(exposedCli)})`], { stdio: 'ignore' });
  const bwrap = spawnSync('setpriv', ['--reuid', String(unprivileged), '--regid', String(unprivileged), '--clear-groups', '--', 'bwrap', '--unshare-user', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
  if (node.status === 0 && bwrap.status === 0) return true;
  if (process.env.CI) throw new Error(`the unprivileged pass needs uid ${unprivileged} to run rein from ${exposed} (${node.status === 0 ? 'it can' : 'it cannot'}) and to run bubblewrap (${bwrap.status === 0 ? 'it can' : 'it cannot'})`);
  return false;
};

interface Pass {
  uid: number;
  run: (args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) => Promise<CliResult>;
  canary: () => ChildProcess;
}

const collect = (child: ChildProcess): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

const own = (uid: number): boolean => uid === process.getuid?.();

const passOf = (uid: number): Pass => ({
  uid,
  run: (args, cwd, env) => {
    const argv = own(uid) ? [process.execPath, cliPath, ...args] : [...asUnprivileged(uid), process.execPath, exposedCli, ...args];
    return collect(spawn(argv[0]!, argv.slice(1), { cwd, env: { PATH: path, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  },
  canary: () => {
    const argv = own(uid) ? ['sleep', '600'] : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', 'sleep', '600'];
    return spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
  },
});

const passes = [...(sandboxed ? [{ name: `as ${root ? 'root' : 'this user'}`, pass: passOf(process.getuid?.() ?? 0) }] : []), ...(sandboxed && unprivilegedWorks() ? [{ name: `as uid ${unprivileged} (setpriv from root)`, pass: passOf(unprivileged) }] : [])];

/** Lines `<name> <verdict> <detail>` of the corpus's output, by name. */
const verdicts = (stdout: string): Map<string, { verdict: string; detail: string }> =>
  new Map(
    stdout
      .split('\n')
      .filter((line) => / (refused|ALLOWED|absent|missing)( |$)/.test(line))
      .map((line) => {
        const [name, verdict, ...detail] = line.split(' ');
        return [name!, { verdict: verdict!, detail: detail.join(' ') }];
      }),
  );

describe.runIf(passes.length > 0)('a sandboxed command cannot write host-global kernel state, and stops at its limits (issue #25 §1)', () => {
  let before: { corePattern: string; hostname: string };
  beforeAll(() => {
    before = { corePattern: readFileSync('/proc/sys/kernel/core_pattern', 'utf8'), hostname: hostname() };
  });
  afterAll(() => {
    // Whatever happened inside, the host's state is as it was.
    expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).toBe(before.corePattern);
    expect(hostname()).toBe(before.hostname);
  });

  for (const { name, pass } of passes) {
    it(`the corpus, kill -9 -1, a fork bomb and a tmpfs fill — ${name}`, async () => {
      const workspace = await makeTempDir('rein-kernel-corpus-');
      const canary = pass.canary();
      try {
        const home = join(workspace.path, 'home');
        const project = join(workspace.path, 'project');
        await mkdir(home);
        await mkdir(project);
        await copyFile(corpus, join(project, 'corpus.sh'));
        await writeFile(join(project, 'rein.config.json'), JSON.stringify({ sandbox: { maxProcesses: 64, maxTmpMb: 8 } }));
        const numbers = syscallNumbers[process.arch];
        if (!numbers) throw new Error(`no system call numbers for ${process.arch}`);
        const bash = (command: string, timeout_ms = 60_000) => ({ name: 'bash', arguments: { command, timeout_ms } });
        const script = {
          turns: [
            { text: 'The corpus.', toolCalls: [bash(`bash corpus.sh ${numbers.join(' ')} ${canary.pid} ${process.pid}`)] },
            { text: 'Everything I may signal.', toolCalls: [bash('kill -9 -1; echo survived')] },
            // The sleep starts before the bomb; the count uses builtins only (no fork is left to make).
            { text: 'A fork bomb.', toolCalls: [bash('sleep 3 & s=$!; bomb() { bomb | bomb & }; bomb 2>/dev/null & wait $s; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "processes $n"', 20_000)] },
            { text: 'Fill every tmpfs.', toolCalls: [bash('for dir in /tmp "$HOME" /dev/shm; do head -c 64M /dev/zero > "$dir/fill" 2>/dev/null; echo "$dir $(stat -c %s "$dir/fill")"; done; touch /planted 2>&1; echo done')] },
            { text: 'Still here.', toolCalls: [bash('echo alive $(id -u)')] },
            { text: 'Done.' },
          ],
        };
        await writeFile(join(project, 'script.json'), JSON.stringify(script));
        await chmod(workspace.path, 0o755);
        for (const folder of [workspace.path, home, project, join(project, 'corpus.sh'), join(project, 'rein.config.json'), join(project, 'script.json')]) await chown(folder, pass.uid, pass.uid);
        const env = { HOME: home, REIN_CONFIG_HOME: join(home, '.config', 'rein') };
        const report = await pass.run(['sandbox', '--json'], project, env);
        expect(report.code, report.stderr).toBe(0);
        const sandbox = JSON.parse(report.stdout) as Record<string, any>;
        expect(sandbox).toMatchObject({ enforcement: 'bubblewrap', user: { enforced: true }, kernel: { enforced: true }, limits: { processes: { max: 64, enforced: true }, tmpMb: { max: 8, enforced: true } } });

        const run = await pass.run(['run', 'probe the sandbox', '--script', 'script.json', '--sandbox', 'required', '--yes', '--json'], project, env);
        expect(run.code, run.stderr).toBe(0);
        const records = jsonLines(run.stdout);
        expect(records.find((record) => record.type === 'sandbox.checked')?.data).toMatchObject({ enforcement: 'bubblewrap', limits: { maxProcesses: 64, maxTmpMb: 8 } });
        const results = records.filter((record) => record.type === 'tool.settled').map((record) => JSON.parse(String(record.data.observation).replace(/^[A-Za-z]+: /, '')) as Record<string, any>);
        expect(results).toHaveLength(5);

        const found = verdicts(results[0]!.stdout as string);
        expect(results[0]!.stdout, results[0]!.stderr).toContain('corpus done');
        const leaked = [...found].filter(([, { verdict }]) => verdict === 'ALLOWED' || verdict === 'missing');
        expect(leaked, 'no write may succeed, and every tool the corpus needs is installed').toEqual([]);
        // These exist on every Linux machine (kernel.modprobe and kernel.sysrq need kernel options): each must have been tried and refused, not found absent.
        for (const check of ['core_pattern', 'vm.swappiness', 'vm.overcommit_memory', 'fs.suid_dumpable', 'hostname', 'mount', 'mount-syscall', 'keyctl-session', 'keyctl-user', 'keyctl-read', 'init_module', 'finit_module', 'insmod', 'reboot', 'dmesg', 'raise-nproc']) {
          expect(found.get(check)?.verdict, `${check}: ${found.get(check)?.detail}`).toBe('refused');
        }
        expect(found.get('core_pattern')?.detail).toMatch(/Read-only file system|Permission denied/);
        expect(found.get('mount-syscall')?.detail).toBe('EPERM');
        expect(found.get('init_module')?.detail).toBe('EPERM');
        expect(found.get('keyctl-session')?.detail).toContain('Operation not permitted');
        expect(found.get('sys')?.verdict).toBe('absent');
        for (const target of ['canary', 'host']) expect(['refused', 'absent'], target).toContain(found.get(`kill-${target}`)?.verdict);

        expect(results[1]).toMatchObject({ stdout: 'survived\n' });
        expect(canary.exitCode).toBeNull();
        expect(canary.signalCode).toBeNull();

        const bomb = /processes (\d+)/.exec(results[2]!.stdout as string);
        expect(bomb, JSON.stringify(results[2])).not.toBeNull();
        // The limit binds the command's uid: the sandbox's init (bubblewrap, root when rein is) may come on top.
        expect(Number(bomb![1])).toBeLessThanOrEqual(64 + 1);
        expect(Number(bomb![1])).toBeGreaterThan(32);

        const filled = String(results[3]!.stdout);
        for (const line of filled.trim().split('\n').slice(0, 3)) expect(Number(line.split(' ')[1]), line).toBeLessThanOrEqual(8 * 1024 * 1024);
        expect(filled).toContain('Read-only file system');
        expect(filled).toMatch(/done\n$/);

        expect(results[4]).toMatchObject({ success: true, stdout: expect.stringMatching(/^alive \d+\n$/) });
        if (root) expect(results[4]!.stdout).not.toBe('alive 0\n');
        expect(entriesOfRows(records).find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'completed' });
      } finally {
        canary.kill('SIGKILL');
        await workspace.remove();
      }
    }, 240_000);
  }

  it.runIf(root)('the trial\'s attack through rein: an npm test script the model wrote cannot set core_pattern (a bash call allowed by an ordinary rule)', async () => {
    const workspace = await makeTempDir('rein-core-pattern-');
    try {
      // The script writes the value core_pattern already has: the same write the trial made, harmless if it succeeds.
      const test = 'v=$(cat /proc/sys/kernel/core_pattern); if printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern; then echo CORE_PATTERN_WRITTEN; else echo CORE_PATTERN_REFUSED; fi';
      const script = {
        turns: [
          { text: 'Adding a test script.', toolCalls: [{ name: 'write', arguments: { path: 'package.json', content: JSON.stringify({ name: 'victim', version: '1.0.0', scripts: { test } }) } }] },
          { text: 'Running the tests.', toolCalls: [{ name: 'bash', arguments: { command: 'npm test' } }] },
          { text: 'Done.' },
        ],
      };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await passOf(0).run(['run', 'run the tests', '--script', 'script.json', '--approve', 'write', '--approve', 'bash:npm test', '--json'], workspace.path, { HOME: process.env.HOME ?? '/root' });
      expect(run.code, run.stderr).toBe(0);
      const bash = jsonLines(run.stdout).find((record) => record.type === 'tool.settled' && record.data.name === 'bash')?.data;
      const result = JSON.parse(String(bash?.observation)) as Record<string, any>;
      expect(result.stdout, JSON.stringify(result)).toContain('CORE_PATTERN_REFUSED');
      expect(result.stderr).toMatch(/Read-only file system|Permission denied/);
      expect(result.sandbox).toMatchObject({ enforcement: 'bubblewrap', user: expect.stringMatching(/^enforced/), kernel: expect.stringMatching(/^enforced/) });
      // The files npm and the model's write made belong to whoever owns the workspace, as always.
      expect((await readFile(join(workspace.path, 'package.json'), 'utf8')).length).toBeGreaterThan(0);
      accessSync(join(workspace.path, 'package.json'), constants.W_OK);
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
