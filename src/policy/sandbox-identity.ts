import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { probeKey } from './probe-key.js';
import { launcherPrefix } from './sandbox-launcher.js';
import { bwrapArguments, sandboxHome, sandboxMounts } from './sandbox-profile.js';
import { seccompProgram } from './sandbox-seccomp.js';

/**
 * Who the kernel sees running a sandboxed command.
 *
 * - `invoking-user`: rein is not root; bubblewrap's user namespace maps the user rein runs as, and files a command
 *   creates belong to that user.
 * - `mapped`: rein is root. Each command runs as an unprivileged uid of its own (drawn from `sandboxUidRange`, used by
 *   nothing else), so no kernel check sees root: sysctls and other root-only files refuse it, `RLIMIT_NPROC` binds it,
 *   and a peer-credential check of a host service sees a stranger. The workspace is an idmapped mount in which the
 *   workspace folder's owner (`ownerUid`, usually root) is that uid: the command owns the owner's files there, and a
 *   file it creates is written as the owner's — on the host, files look as if the owner had made them.
 * - `root`: rein is root and the mapping cannot be made here (`reason`: no idmapped mounts on this file system or
 *   kernel, no `setpriv`, no Perl); the command runs as root without capabilities, and the process limit does not bind.
 */
export type SandboxIdentity = { kind: 'invoking-user'; uid: number } | { kind: 'mapped'; ownerUid: number; ownerGid: number } | { kind: 'root'; reason: string };

/** The uids a command may be given when rein is root: above systemd's container range, below its reserved ones. */
export const sandboxUidRange = Object.freeze({ first: 0x7000_0000, count: 0x0e00_0000 });

/** A fresh uid from the range for one command (or one sandboxed server): each gets its own process count. */
export const pickSandboxUid = (): number => sandboxUidRange.first + randomInt(sandboxUidRange.count);

/** Where `setpriv` (util-linux) is: it switches a command to its uid inside the sandbox. Inside the system directories only. */
export const setprivPath = (): string | null => ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path)) ?? null;

/**
 * The capabilities bubblewrap keeps for the first program of the sandbox (setpriv), which drops them all when it
 * switches to the command's uid: changing uid and gid, emptying the bounding set, and searching folders — bubblewrap
 * enters the working folder as root before setpriv runs, and through the idmapped mount a `0700` workspace belongs to
 * the command's uid, not to root.
 */
export const identityFlags: readonly string[] = Object.freeze(['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP', '--cap-add', 'CAP_DAC_READ_SEARCH']);

/**
 * The prefix inside the sandbox that drops to `uid` before the command: its gid too, no supplementary groups, no
 * capabilities (the three above included, from the bounding set too) and no new privileges.
 */
export const identityPrefix = (setpriv: string, uid: number): string[] => [setpriv, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

const run = (argv: readonly string[]): Promise<{ code: number | null; stderr: string }> =>
  new Promise((resolve) => {
    let stderr = '';
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });

const firstLine = (text: string): string => text.trim().split('\n')[0]?.slice(0, 300) ?? '';

const identities = new Map<string, Promise<SandboxIdentity>>();

/**
 * The identity commands in `workspace` get, found once per process, workspace and programs (bubblewrap and Perl as
 * PATH resolves them now, `probeKey`) by a real trial when rein is root:
 * the launcher maps the workspace, bubblewrap starts, setpriv switches to a fresh uid and `test -w` finds the
 * workspace writable. A refusal at any step gives `root` with the step's reason.
 */
export const sandboxIdentity = (workspace: string, bubblewrap = 'bwrap'): Promise<SandboxIdentity> => {
  if (!isRoot()) return Promise.resolve({ kind: 'invoking-user', uid: process.getuid?.() ?? -1 });
  const key = probeKey([bubblewrap, 'perl'], [workspace, sandboxHome()]);
  let found = identities.get(key);
  if (!found) {
    found = (async (): Promise<SandboxIdentity> => {
      const setpriv = setprivPath();
      if (!setpriv) return { kind: 'root', reason: 'setpriv (util-linux) is not installed' };
      let owner: { uid: number; gid: number };
      try {
        owner = statSync(workspace);
      } catch (error) {
        return { kind: 'root', reason: `the workspace cannot be read (${(error as Error).message})` };
      }
      const uid = pickSandboxUid();
      const home = sandboxHome();
      const prefix = launcherPrefix({ seccomp: seccompProgram(), mapped: { uid, ownerUid: owner.uid, ownerGid: owner.gid, workspace, home } });
      if (!prefix) return { kind: 'root', reason: `the sandbox launcher does not know the system calls of ${process.arch}` };
      const mounts = sandboxMounts({ workspace, workspaceWritable: true, protectedPaths: [], home, foreignUser: true, tmpSizeMb: 1 });
      const trial = await run([...prefix, bubblewrap, ...bwrapArguments(mounts, { network: false, cwd: workspace }), ...identityFlags, '--', ...identityPrefix(setpriv, uid), '/bin/sh', '-c', 'test "$(id -u)" = "$1" && test -w "$2"', 'rein-probe', String(uid), workspace]);
      if (trial.code === 0) return { kind: 'mapped', ownerUid: owner.uid, ownerGid: owner.gid };
      const said = firstLine(trial.stderr);
      if (trial.code === null) return { kind: 'root', reason: `the sandbox launcher cannot start (${said})` };
      return { kind: 'root', reason: said ? `an unprivileged uid cannot be mapped here (${said.replace(/^rein sandbox launcher: /, '')})` : `the workspace is not writable through an idmapped mount (its owner is uid ${owner.uid})` };
    })();
    identities.set(key, found);
  }
  return found;
};
