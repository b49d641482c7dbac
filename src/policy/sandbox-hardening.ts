import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { identityFlags, identityPrefix, pickSandboxUid, sandboxIdentity, setprivPath, type SandboxIdentity } from './sandbox-identity.js';
import { probeKey } from './probe-key.js';
import { launcherPrefix } from './sandbox-launcher.js';
import type { Enforcement } from './sandbox-policy.js';
import { bwrapArguments, sandboxHome, sandboxMounts } from './sandbox-profile.js';
import { refusedSyscalls, seccompProgram } from './sandbox-seccomp.js';

/** Whether a part of the hardening works here, or why not. */
export type HardeningProbe = { available: true } | { available: false; reason: string };

const trial = (argv: readonly string[], fd3?: Buffer): Promise<{ code: number | null; stderr: string; error?: NodeJS.ErrnoException }> =>
  new Promise((resolve) => {
    let stderr = '';
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', ...(fd3 ? ['pipe' as const] : [])], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    if (fd3) (child.stdio[3] as NodeJS.WritableStream & { on(event: 'error', listener: () => void): void }).on('error', () => undefined);
    if (fd3) (child.stdio[3] as NodeJS.WritableStream).end(fd3);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message, error });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });

const firstLine = (text: string, fallback: string): string => text.trim().split('\n')[0]?.slice(0, 300) || fallback;

/** The argv of bubblewrap around `/bin/true` in the probe's profile (the real profile's shape, a scratch workspace). */
const probeArguments = (): string[] => bwrapArguments(sandboxMounts({ workspace: tmpdir(), workspaceWritable: false, protectedPaths: [], home: sandboxHome(), tmpSizeMb: 1 }), { network: false, cwd: '/' });

/** What a hardening probe's answer depends on: the programs it runs (resolved on PATH now), the user, its mounts' sources. */
const hardeningKey = (programs: readonly string[]): string => probeKey(programs, [tmpdir(), sandboxHome()]);

const seccompProbes = new Map<string, Promise<HardeningProbe>>();
const launcherProbes = new Map<string, Promise<HardeningProbe>>();

/**
 * Find out once per process whether bubblewrap loads the seccomp program here (`--seccomp 3`, the program on fd 3):
 * a real trial around `/bin/true`. Where it cannot, commands run in bubblewrap without the filter, and say so.
 */
export const probeSeccomp = (bubblewrap = 'bwrap'): Promise<HardeningProbe> => {
  const key = hardeningKey([bubblewrap]);
  let probe = seccompProbes.get(key);
  if (!probe) {
    const program = seccompProgram();
    probe = !program
      ? Promise.resolve<HardeningProbe>({ available: false, reason: `rein has no seccomp program for ${process.arch}` })
      : trial([bubblewrap, ...probeArguments(), '--seccomp', '3', '--', '/bin/true'], program).then((result) => (result.code === 0 ? { available: true } : { available: false, reason: `bubblewrap does not load the seccomp program here (${firstLine(result.stderr, `exit ${result.code}`)})` }));
    seccompProbes.set(key, probe);
  }
  return probe;
};

/**
 * Find out once per process whether the launcher (Perl) starts bubblewrap with the seccomp program here — what a
 * program started from an argv alone (a sandboxed MCP server) needs: a real trial around `/bin/true`.
 */
export const probeLauncher = (bubblewrap = 'bwrap'): Promise<HardeningProbe> => {
  const key = hardeningKey([bubblewrap, 'perl']);
  let probe = launcherProbes.get(key);
  if (!probe) {
    const program = seccompProgram();
    const prefix = program ? launcherPrefix({ seccomp: program }) : null;
    probe = !prefix
      ? Promise.resolve<HardeningProbe>({ available: false, reason: `rein has no seccomp program or launcher for ${process.arch}` })
      : trial([...prefix, bubblewrap, ...probeArguments(), '--', '/bin/true']).then((result) => (result.code === 0 ? { available: true } : { available: false, reason: result.error?.code === 'ENOENT' ? 'perl is not installed' : `the launcher does not work here (${firstLine(result.stderr, `exit ${result.code}`)})` }));
    launcherProbes.set(key, probe);
  }
  return probe;
};

/** What a bubblewrap command gets beyond its mounts: the launcher, its identity, and how each is enforced. */
export interface HardenedSandbox {
  /** The argv before bubblewrap's own arguments: the launcher's prefix (if any) and the binary. */
  head: string[];
  /** bubblewrap options after the profile's (`--seccomp 3`; the capabilities setpriv needs, after `--cap-drop ALL`). */
  flags: string[];
  /** The argv inside the sandbox before the command: the switch to the command's uid (root only). */
  inner: string[];
  /** The seccomp program the spawn must hand bubblewrap on fd 3 (`flags` holds `--seccomp 3`), if any. */
  seccompOnFd3?: Buffer;
  /** The command runs as another uid than bubblewrap (see `ProfileInput.foreignUser`). */
  foreignUser: boolean;
  identity: SandboxIdentity;
  /** The uid the command runs as, when rein gave it one. */
  uid?: number;
  /** Who the kernel sees: the invoking user, a fresh unprivileged uid, or root (not enforced). */
  user: Enforcement;
  /** Host-global kernel state: read-only `/proc`, and the seccomp filter where it works. */
  kernel: Enforcement;
}

const kernelText = 'the machine\'s kernel settings (/proc/sys, sysrq-trigger, …) read-only, /sys absent';

const kernelOf = (probe: HardeningProbe): Enforcement => (probe.available ? { enforced: true, mechanism: `${kernelText}; seccomp refuses ${refusedSyscalls.join(', ')}` } : { enforced: false, reason: `no seccomp filter (${probe.reason}): keyctl reaches rein's session keyring; ${kernelText}` });

/**
 * Lay out one bubblewrap launch's hardening for a workspace: the seccomp program, and when rein is root a fresh
 * unprivileged uid with the workspace mapped to it (see `sandboxIdentity`; this needs the launcher). A command rein
 * spawns itself gets the program on fd 3 (no launcher when it is not root); `argvOnly` (a program another library
 * spawns from an argv) gets it through the launcher.
 */
export const hardenSandbox = async (options: { bubblewrap: string; workspace: string; home?: string; argvOnly?: boolean }): Promise<HardenedSandbox> => {
  const identity = await sandboxIdentity(options.workspace, options.bubblewrap);
  const setpriv = setprivPath();
  if (identity.kind === 'mapped' && setpriv) {
    // The identity's own probe ran the launcher with the seccomp program: both work.
    const uid = pickSandboxUid();
    const prefix = launcherPrefix({ seccomp: seccompProgram(), mapped: { uid, ownerUid: identity.ownerUid, ownerGid: identity.ownerGid, workspace: options.workspace, home: options.home ?? sandboxHome() } });
    if (prefix) {
      return {
        head: [...prefix, options.bubblewrap],
        flags: [...identityFlags],
        inner: identityPrefix(setpriv, uid),
        foreignUser: true,
        identity,
        uid,
        user: { enforced: true, mechanism: `uid ${uid}, unprivileged and used by nothing else; the workspace is an idmapped mount in which it owns uid ${identity.ownerUid}'s files, and files it creates are uid ${identity.ownerUid}'s on the host` },
        kernel: kernelOf({ available: true }),
      };
    }
  }
  const user: Enforcement = identity.kind === 'invoking-user' ? { enforced: true, mechanism: `the user rein runs as (uid ${identity.uid}), not root` } : { enforced: false, reason: `runs as root without capabilities: ${identity.kind === 'root' ? identity.reason : 'setpriv (util-linux) is not installed'}` };
  const base = { inner: [], foreignUser: false, identity, user };
  if (options.argvOnly) {
    const launcher = await probeLauncher(options.bubblewrap);
    const prefix = launcher.available ? launcherPrefix({ seccomp: seccompProgram() }) : null;
    return { ...base, head: [...(prefix ?? []), options.bubblewrap], flags: [], kernel: kernelOf(launcher) };
  }
  const seccomp = await probeSeccomp(options.bubblewrap);
  const program = seccomp.available ? seccompProgram() : null;
  return { ...base, head: [options.bubblewrap], flags: program ? ['--seccomp', '3'] : [], ...(program ? { seccompOnFd3: program } : {}), kernel: kernelOf(seccomp) };
};
