import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { identityFlags, identityPrefix, pickSandboxUid, sandboxIdentity, setprivPath, type SandboxIdentity } from './sandbox-identity.js';
import { launcherPrefix } from './sandbox-launcher.js';
import type { Enforcement } from './sandbox-policy.js';
import { bwrapArguments, sandboxHome, sandboxMounts } from './sandbox-profile.js';
import { refusedSyscalls, seccompProgram } from './sandbox-seccomp.js';

/** Whether the launcher can start bubblewrap with the seccomp program here, or why not. */
export type LauncherProbe = { available: true } | { available: false; reason: string };

const launchers = new Map<string, Promise<LauncherProbe>>();

/**
 * Find out once per process whether the launcher (Perl) starts bubblewrap with the seccomp program here: a real trial
 * around `/bin/true` in the probe's profile. Where it cannot, commands run in bubblewrap without the filter.
 */
export const probeLauncher = (bubblewrap = 'bwrap'): Promise<LauncherProbe> => {
  let probe = launchers.get(bubblewrap);
  if (!probe) {
    probe = new Promise<LauncherProbe>((resolve) => {
      const program = seccompProgram();
      const prefix = program ? launcherPrefix({ seccomp: program }) : null;
      if (!program || !prefix) return resolve({ available: false, reason: `rein has no seccomp program for ${process.arch}` });
      const argv = bwrapArguments(sandboxMounts({ workspace: tmpdir(), workspaceWritable: false, protectedPaths: [], home: sandboxHome(), tmpSizeMb: 1 }), { network: false, cwd: '/' });
      let stderr = '';
      const child = spawn(prefix[0]!, [...prefix.slice(1), bubblewrap, ...argv, '--', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ available: false, reason: error.code === 'ENOENT' ? 'perl is not installed' : `the launcher cannot start: ${error.message}` });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve(code === 0 ? { available: true } : { available: false, reason: `the launcher does not work here (${stderr.trim().split('\n')[0]?.slice(0, 300) || `exit ${code}`})` });
      });
    });
    launchers.set(bubblewrap, probe);
  }
  return probe;
};

/** What a bubblewrap command gets beyond its mounts: the launcher, its identity, and how each is enforced. */
export interface HardenedSandbox {
  /** The argv before bubblewrap's own arguments: the launcher's prefix (if any) and the binary. */
  head: string[];
  /** bubblewrap options after the profile's (the capabilities setpriv needs come after `--cap-drop ALL`). */
  flags: string[];
  /** The argv inside the sandbox before the command: the switch to the command's uid (root only). */
  inner: string[];
  /** The command runs as another uid than bubblewrap (see `ProfileInput.foreignUser`). */
  foreignUser: boolean;
  identity: SandboxIdentity;
  /** The uid the command runs as, when rein gave it one. */
  uid?: number;
  /** Who the kernel sees: the invoking user, a fresh unprivileged uid, or root (not enforced). */
  user: Enforcement;
  /** Host-global kernel state: read-only `/proc`, and the seccomp filter when the launcher works. */
  kernel: Enforcement;
  /** Whether `RLIMIT_NPROC` binds the command (it does not bind root). */
  processLimitBinds: boolean;
}

const kernelText = 'the machine\'s kernel settings (/proc/sys, sysrq-trigger, …) read-only, /sys absent';

/**
 * Lay out one bubblewrap launch's hardening for a workspace: the launcher with the seccomp program when it works, and
 * when rein is root a fresh unprivileged uid with the workspace mapped to it (see `sandboxIdentity`).
 */
export const hardenSandbox = async (options: { bubblewrap: string; workspace: string; home?: string }): Promise<HardenedSandbox> => {
  const [launcher, identity] = await Promise.all([probeLauncher(options.bubblewrap), sandboxIdentity(options.workspace, options.bubblewrap)]);
  const seccomp = launcher.available ? seccompProgram() : null;
  const kernel: Enforcement = seccomp ? { enforced: true, mechanism: `${kernelText}; seccomp refuses ${refusedSyscalls.join(', ')}` } : { enforced: false, reason: `no seccomp filter (${launcher.available ? 'no program for this architecture' : launcher.reason}): keyctl reaches rein's session keyring; ${kernelText}` };
  const setpriv = setprivPath();
  if (identity.kind === 'mapped' && setpriv) {
    const uid = pickSandboxUid();
    const prefix = launcherPrefix({ seccomp, mapped: { uid, ownerUid: identity.ownerUid, ownerGid: identity.ownerGid, workspace: options.workspace, home: options.home ?? sandboxHome() } });
    if (prefix) {
      return {
        head: [...prefix, options.bubblewrap],
        flags: [...identityFlags],
        inner: identityPrefix(setpriv, uid),
        foreignUser: true,
        identity,
        uid,
        user: { enforced: true, mechanism: `uid ${uid}, unprivileged and used by nothing else; the workspace is an idmapped mount in which it owns uid ${identity.ownerUid}'s files, and files it creates are uid ${identity.ownerUid}'s on the host` },
        kernel,
        processLimitBinds: true,
      };
    }
  }
  const head = seccomp ? [...(launcherPrefix({ seccomp }) ?? []), options.bubblewrap] : [options.bubblewrap];
  if (identity.kind === 'invoking-user') return { head, flags: [], inner: [], foreignUser: false, identity, user: { enforced: true, mechanism: `the user rein runs as (uid ${identity.uid}), not root` }, kernel, processLimitBinds: true };
  const reason = identity.kind === 'root' ? identity.reason : 'setpriv (util-linux) is not installed';
  return { head, flags: [], inner: [], foreignUser: false, identity, user: { enforced: false, reason: `runs as root without capabilities: ${reason}` }, kernel, processLimitBinds: false };
};
