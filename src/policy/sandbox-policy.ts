import { digestOf } from '../../machines/typestate/digest.js';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { probeKey } from './probe-key.js';

/** Network access of commands: none, unrestricted, or only the listed hosts. */
export type NetworkPolicy = 'disabled' | 'allow-all' | 'allow-list';

/**
 * Whether commands run in the OS sandbox: `auto` uses bubblewrap when the start-up probe finds it working and falls
 * back (saying so) otherwise; `required` refuses to run commands without it; `off` never uses it.
 */
export type SandboxMode = 'auto' | 'required' | 'off';

/** Limits for processes the `bash` tool starts. Sizes are bytes, times milliseconds. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** The bubblewrap binary the probe tries (default `bwrap`, found on PATH). */
  bubblewrap: string;
  /**
   * Run commands as `<shell> -lc` (a login shell: the user's profile sets PATH and friends) instead of `-c`. Off by
   * default: a profile costs time on every call, can re-export variables the allow-list cleared, and makes a
   * command's behaviour depend on the machine.
   */
  loginShell: boolean;
  network: NetworkPolicy;
  /** Host names reachable under `allow-list` (exact, case-insensitive; `*.example.com` covers its subdomains). */
  allowedHosts: readonly string[];
  /** Environment variables passed through; every other one is cleared. */
  envAllowList: readonly string[];
  /** Timeout when the model gives none, and the most it may ask for (its `timeout_ms` is clamped to this). */
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  /** Time between SIGTERM (soft timeout) and SIGKILL (hard timeout) of the whole process group. */
  killGraceMs: number;
  /** Characters of stdout / stderr shown to the model; the full output goes to an artifact. */
  stdoutPreviewChars: number;
  stderrPreviewChars: number;
  /** The most output kept per stream; beyond it output is dropped (and the result says so). */
  maxCaptureBytes: number;
  /**
   * Process-count and data-segment limits, applied with prlimit where the OS allows. The process count binds every
   * uid but root; under bubblewrap a command never runs as root when the identity mapping works (see
   * `sandbox-identity.ts`).
   */
  maxProcesses: number;
  maxMemoryMb: number;
  /** The size of each private tmpfs a sandboxed command can write (`/tmp`, its home, `/dev/shm`), in MB. */
  maxTmpMb: number;
}

export const defaultSandboxPolicy: SandboxPolicy = Object.freeze({
  mode: 'auto',
  bubblewrap: 'bwrap',
  loginShell: false,
  network: 'disabled',
  allowedHosts: [],
  envAllowList: ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'COLUMNS', 'LINES'],
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  killGraceMs: 2_000,
  stdoutPreviewChars: 8_000,
  stderrPreviewChars: 4_000,
  maxCaptureBytes: 32 * 1024 * 1024,
  maxProcesses: 1_024,
  maxMemoryMb: 4_096,
  maxTmpMb: 1_024,
}) as SandboxPolicy;

/** What this machine can enforce, found once per process by trying the tools. */
export interface IsolationSupport {
  /** The shell commands run under: `/bin/bash` or the `/bin/sh` fallback. */
  shell: string;
  /** The prefix that runs a command without network (`unshare -n` / `unshare -rn`), or null. */
  networkOff: readonly string[] | null;
  /** The prlimit binary, or null. */
  prlimit: string | null;
  /** Whether the process runs as root (RLIMIT_NPROC does not bind root). */
  root: boolean;
}

const detected = new Map<string, IsolationSupport>();

const works = (command: string, args: readonly string[]): boolean => {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 5_000 });
  return result.status === 0;
};

/**
 * Detect the shell, network isolation and prlimit once per user and programs (`unshare` and `prlimit` as PATH
 * resolves them now, `probeKey`); later calls return the cached answer.
 */
export const detectIsolation = (): IsolationSupport => {
  const key = probeKey(['unshare', 'prlimit', 'true']);
  const known = detected.get(key);
  if (known) return known;
  const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
  const networkOff = works('unshare', ['-n', 'true']) ? ['unshare', '-n'] : works('unshare', ['-rn', 'true']) ? ['unshare', '-rn'] : null;
  const prlimit = works('prlimit', ['--nofile=1024', 'true']) ? 'prlimit' : null;
  const support = { shell, networkOff, prlimit, root: typeof process.getuid === 'function' && process.getuid() === 0 };
  detected.set(key, support);
  return support;
};

/**
 * Why the fallback (no bubblewrap) cannot enforce the network policy here, or null when it can: `disabled` and
 * `allow-list` need a network namespace (`unshare -n`), and where every way to make one is refused the network is
 * open whatever the policy says.
 */
export const unenforcedNetwork = (policy: Pick<SandboxPolicy, 'network'>, support: Pick<IsolationSupport, 'networkOff'>): string | null => {
  if (policy.network === 'allow-all' || support.networkOff) return null;
  return 'no network namespace can be made here (unshare -n and unshare -rn are refused or missing): the network is open';
};

/**
 * Why a command must not run because the network policy it asks for cannot hold, or null: `disabled` or `allow-list`
 * that nothing enforces is refused unless the user chose `--sandbox off` (no isolation, said so) or `allow-all`.
 */
export const networkRefusal = (policy: Pick<SandboxPolicy, 'network' | 'mode'>, support: Pick<IsolationSupport, 'networkOff'>): string | null => {
  const reason = unenforcedNetwork(policy, support);
  if (!reason || policy.mode === 'off') return null;
  return `the network policy is "${policy.network}" but without bubblewrap nothing can enforce it: ${reason}. Run with --sandbox off to accept commands with the network open, or --network allow-all`;
};

/** How one policy dimension was enforced, as the `bash` result and README report it. */
export interface Enforcement {
  enforced: boolean;
  mechanism?: string;
  reason?: string;
}

/**
 * The fallback command prefix (no OS sandbox) that applies the policy on this machine, and how each dimension is
 * enforced: prlimit for processes and memory, `unshare -n` for the network. Under `allow-list` the new network
 * namespace is reached only through the allow-list proxy's bridge (`bridged`), when the caller sets one up.
 */
export const sandboxPrefix = (policy: SandboxPolicy, support: IsolationSupport, options: { bridged?: boolean } = {}): { prefix: string[]; network: Enforcement; processes: Enforcement; memory: Enforcement } => {
  const prefix: string[] = [];
  const limits = limitPrefix(policy, support);
  prefix.push(...limits.prefix);
  let network: Enforcement;
  if (policy.network === 'allow-all') network = { enforced: true, mechanism: 'none needed' };
  else if (!support.networkOff) network = { enforced: false, reason: unenforcedNetwork(policy, support)! };
  else if (policy.network === 'disabled') {
    prefix.push(...support.networkOff);
    network = { enforced: true, mechanism: support.networkOff.join(' ') };
  } else if (options.bridged) {
    prefix.push(...support.networkOff);
    network = { enforced: true, mechanism: `${support.networkOff.join(' ')} + allow-list proxy` };
  } else network = { enforced: false, reason: 'no allow-list bridge was set up; the network is open' };
  return { prefix, network, processes: limits.processes, memory: limits.memory };
};

/**
 * The prlimit prefix for the process and memory limits, and whether each binds here. `unprivileged`: the command runs
 * as another uid than root although rein is root (see `sandbox-identity.ts`), so the process count binds it.
 */
export const limitPrefix = (policy: SandboxPolicy, support: IsolationSupport, options: { unprivileged?: boolean } = {}): { prefix: string[]; processes: Enforcement; memory: Enforcement } => {
  if (!support.prlimit) return { prefix: [], processes: { enforced: false, reason: 'prlimit is not installed' }, memory: { enforced: false, reason: 'prlimit is not installed' } };
  return {
    prefix: [support.prlimit, `--nproc=${policy.maxProcesses}`, `--data=${policy.maxMemoryMb * 1024 * 1024}`],
    processes: support.root && !options.unprivileged ? { enforced: false, reason: 'RLIMIT_NPROC does not bind root' } : { enforced: true, mechanism: support.root ? 'prlimit --nproc, as an unprivileged uid of its own' : 'prlimit --nproc' },
    memory: { enforced: true, mechanism: 'prlimit --data' },
  };
};

/** A stable id of a sandbox policy (`sandbox:<12 hex>` of its canonical digest): shell results and CallSpecs name it. */
export const sandboxProfileOf = (policy: SandboxPolicy): string => `sandbox:${digestOf(policy).slice(3, 15)}`;
