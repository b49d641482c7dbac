import { startAllowListProxy, type AllowListProxy } from '../policy/network-proxy.js';
import { bwrapArguments, runtimeDirectory, sandboxHome, sandboxMounts } from '../policy/sandbox-profile.js';
import { hardenSandbox } from '../policy/sandbox-hardening.js';
import { detectIsolation, limitPrefix, networkRefusal, sandboxPrefix, type Enforcement, type SandboxPolicy } from '../policy/sandbox-policy.js';
import { sandboxEnforcement, type SandboxEnforcement } from '../policy/sandbox-probe.js';
import { commandWatchdog } from './command-watchdog.js';
import { callMarkerVariable } from './process-tree.js';
import type { Workspace } from './workspace.js';

/** A session's sandbox: its policy over its workspace (what a sandboxed hook or MCP server is confined by). */
export interface SandboxScope {
  policy: SandboxPolicy;
  workspace: Workspace;
}

/** The port the allow-list bridge listens on inside a command's private network namespace. */
export const bridgePort = 3128;

/** How one command is started: its argv and environment, and what the sandbox enforces for it. */
export interface Launch {
  argv: string[];
  env: NodeJS.ProcessEnv;
  shell: string;
  sandbox: SandboxEnforcement;
  /**
   * `lifetime`: whether every process the command starts is bound to end with its call and with rein; `user`: who
   * the kernel sees (never root under bubblewrap when the mapping works); `kernel`: whether host-global kernel state
   * is out of reach; `tmp`: whether its writable tmpfs mounts are bounded.
   */
  enforcement: { filesystem: Enforcement; network: Enforcement; processes: Enforcement; memory: Enforcement; lifetime: Enforcement; user: Enforcement; kernel: Enforcement; tmp: Enforcement };
  /** The allow-list proxy serving this command (under `allow-list`); the caller closes it when the command ends. */
  proxy?: AllowListProxy;
  /**
   * The fallback's watchdog runs the command (see `commandWatchdog`): the spawn gives it a socket on fd 3 and keeps
   * the other end, and everything the command starts stays below it and dies with rein.
   */
  watchdog?: boolean;
  /** The seccomp program bubblewrap reads on fd 3 (`--seccomp 3`): the spawn writes it into a pipe there. */
  seccomp?: Buffer;
}

export interface LaunchRequest {
  command: string;
  /** Canonical working directory inside the workspace. */
  cwd: string;
  policy: SandboxPolicy;
  workspace: Workspace;
  /** `<session>:<call id>`: every process of the call carries it as `REIN_CALL`, so resume can prove them gone. */
  marker: string;
  /** Protected paths read-only rather than hidden (a hook the user configured; see `ProfileInput.protectedReadable`). */
  protectedReadable?: boolean;
}

/**
 * Inside the command's network namespace: start socat forwarding 127.0.0.1:3128 to the proxy's Unix socket, wait
 * until it listens (read from /proc/net/tcp, so no connection is made), run the command, stop the bridge, and exit
 * with the command's status.
 */
const bridgeScript = (socket: string): string => {
  const port = bridgePort.toString(16).toUpperCase().padStart(4, '0');
  return [
    // bubblewrap brings loopback up in its network namespace; `unshare -n` (the fallback) does not.
    'ip link set lo up 2>/dev/null || /sbin/ip link set lo up 2>/dev/null',
    `socat TCP-LISTEN:${bridgePort},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socket} 2>/dev/null & bridge=$!`,
    `tries=0; while ! grep -q ' 0100007F:${port} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do tries=$((tries+1)); [ $tries -gt 1000 ] && break; sleep 0.005; done`,
    '"$@"; status=$?; kill $bridge 2>/dev/null; exit $status',
  ].join('\n');
};

const proxyVariables = (): NodeJS.ProcessEnv => {
  const url = `http://127.0.0.1:${bridgePort}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: '', no_proxy: '' };
};

const baseEnvironment = (policy: SandboxPolicy, marker: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const name of policy.envAllowList) if (process.env[name] !== undefined) env[name] = process.env[name];
  env[callMarkerVariable] = marker;
  return env;
};

/**
 * Decide how to start one `bash` command under the policy: inside bubblewrap when the probe found it working (and
 * the mode is not `off`), otherwise with the fallback measures (process group, `unshare`, prlimit) — or refused
 * when the mode is `required`. Under `allow-list` it starts the proxy and the bridge.
 */
export const prepareLaunch = async (request: LaunchRequest): Promise<Launch | { refused: string }> => {
  const { policy, workspace } = request;
  const sandbox = await sandboxEnforcement(policy);
  if (sandbox.enforcement === 'fallback' && policy.mode === 'required') return { refused: `the sandbox mode is "required" but bubblewrap is not available: ${sandbox.reason}` };
  const support = detectIsolation();
  const network = sandbox.enforcement === 'fallback' ? networkRefusal(policy, support) : null;
  if (network) return { refused: network };
  const env = baseEnvironment(policy, request.marker);
  const proxy = policy.network === 'allow-list' ? await startAllowListProxy({ allowedHosts: policy.allowedHosts }) : undefined;
  if (proxy) Object.assign(env, proxyVariables());
  const shellArgv = [support.shell, policy.loginShell ? '-lc' : '-c', request.command];
  if (sandbox.enforcement === 'bubblewrap') {
    const home = sandboxHome();
    Object.assign(env, { HOME: home, TMPDIR: '/tmp' });
    const hardened = await hardenSandbox({ bubblewrap: policy.bubblewrap, workspace: workspace.root, home });
    const mounts = sandboxMounts({ workspace: workspace.root, workspaceWritable: true, protectedPaths: workspace.protectedList(), readableProtected: workspace.readableList(), ...(request.protectedReadable ? { protectedReadable: true } : {}), home, toolDirectories: [runtimeDirectory()], ...(proxy ? { extraFiles: [proxy.socketPath] } : {}), tmpSizeMb: policy.maxTmpMb, foreignUser: hardened.foreignUser });
    const limits = limitPrefix(policy, support, { unprivileged: hardened.identity.kind === 'mapped' });
    const network: Enforcement = policy.network === 'allow-all' ? { enforced: true, mechanism: 'none needed' } : { enforced: true, mechanism: proxy ? 'bubblewrap --unshare-net + allow-list proxy' : 'bubblewrap --unshare-net' };
    return {
      argv: [...hardened.head, ...bwrapArguments(mounts, { network: policy.network === 'allow-all', cwd: request.cwd }), ...hardened.flags, '--', ...hardened.inner, ...limits.prefix, ...(proxy ? ['/bin/sh', '-c', bridgeScript(proxy.socketPath), 'rein-bridge'] : []), ...shellArgv],
      env,
      shell: support.shell,
      sandbox,
      ...(hardened.seccompOnFd3 ? { seccomp: hardened.seccompOnFd3 } : {}),
      enforcement: { filesystem: { enforced: true, mechanism: 'bubblewrap: the workspace only, protected paths masked' }, network, processes: limits.processes, memory: limits.memory, lifetime: { enforced: true, mechanism: 'bubblewrap: own pid namespace, --die-with-parent' }, user: hardened.user, kernel: hardened.kernel, tmp: { enforced: true, mechanism: 'tmpfs size' } },
      ...(proxy ? { proxy } : {}),
    };
  }
  const fallback = sandboxPrefix(policy, support, { bridged: proxy !== undefined && support.networkOff !== null });
  const bridged = proxy !== undefined && support.networkOff !== null;
  const { prefix: watchdog, reason: noWatchdog, pidNamespace } = commandWatchdog();
  const lifetime: Enforcement = !watchdog
    ? { enforced: false, reason: `${noWatchdog ?? 'no watchdog'}; a command killed together with rein can survive it (resume kills it by its marker)` }
    : pidNamespace?.enforced
      ? { enforced: true, mechanism: 'watchdog: a subreaper outside the command\'s own pid namespace (the command cannot signal it) that kills everything below it when the call ends or rein dies' }
      : { enforced: false, reason: `${pidNamespace?.reason ?? 'no pid namespace'}: a watchdog kills everything below it when the call ends or rein dies, but a command that kills its own watchdog can leave processes running (resume kills those still carrying the call's marker)` };
  // Perl's complaint about a locale this machine lacks would land in every command's stderr; the watchdog drops it.
  if (watchdog) env.PERL_BADLANG = '0';
  return {
    argv: [...(watchdog ?? []), ...fallback.prefix, ...(bridged ? ['/bin/sh', '-c', bridgeScript(proxy.socketPath), 'rein-bridge'] : []), ...shellArgv],
    env,
    ...(watchdog ? { watchdog: true } : {}),
    shell: support.shell,
    sandbox,
    enforcement: {
      filesystem: { enforced: false, reason: sandbox.reason },
      network: fallback.network,
      processes: fallback.processes,
      memory: fallback.memory,
      lifetime,
      user: support.root ? { enforced: false, reason: 'no sandbox: the command runs as root, with every capability rein has' } : { enforced: true, mechanism: `the user rein runs as (uid ${process.getuid?.() ?? '?'}), not root` },
      kernel: { enforced: false, reason: 'no sandbox: /proc and /sys are the host\'s' },
      tmp: { enforced: false, reason: 'no sandbox: /tmp is the host\'s' },
    },
    ...(proxy ? { proxy } : {}),
  };
};

/**
 * Wrap a read-only helper (ripgrep) in bubblewrap when it is available: the workspace read-only, the helper's own
 * directory, no network, protected paths masked. Where bubblewrap is not available the argv is returned unchanged.
 */
export const sandboxedHelper = async (options: { argv: readonly string[]; cwd: string; workspace: Workspace; policy: SandboxPolicy; toolDirectories: readonly string[] }): Promise<{ argv: string[]; sandboxed: boolean }> => {
  const sandbox = await sandboxEnforcement(options.policy);
  if (sandbox.enforcement !== 'bubblewrap') return { argv: [...options.argv], sandboxed: false };
  const mounts = sandboxMounts({ workspace: options.workspace.root, workspaceWritable: false, protectedPaths: options.workspace.protectedList(), readableProtected: options.workspace.readableList(), home: sandboxHome(), toolDirectories: options.toolDirectories });
  return { argv: [options.policy.bubblewrap, ...bwrapArguments(mounts, { network: false, cwd: options.cwd }), '--', ...options.argv], sandboxed: true };
};

/**
 * Wrap a long-lived program a user configured (a workspace's local MCP server) in bubblewrap: the workspace
 * read-write with its protected paths read-only, an empty home, Node's directory, the network only under
 * `allow-all`, tied to rein's life (`--die-with-parent`). Where bubblewrap does not work it is refused with why: such
 * a program asked for the sandbox, and the fallback measures (a cleared environment, limits) are made for one command.
 */
export const sandboxedProgram = async (scope: SandboxScope, options: { argv: readonly string[]; cwd: string }): Promise<{ argv: string[] } | { refused: string }> => {
  const sandbox = await sandboxEnforcement(scope.policy);
  if (sandbox.enforcement !== 'bubblewrap') return { refused: `it asks for the sandbox ("sandbox": true), and bubblewrap does not work here: ${sandbox.reason}` };
  const home = sandboxHome();
  const hardened = await hardenSandbox({ bubblewrap: scope.policy.bubblewrap, workspace: scope.workspace.root, home, argvOnly: true });
  const mounts = sandboxMounts({ workspace: scope.workspace.root, workspaceWritable: true, protectedPaths: scope.workspace.protectedList(), readableProtected: scope.workspace.readableList(), protectedReadable: true, home, toolDirectories: [runtimeDirectory()], tmpSizeMb: scope.policy.maxTmpMb, foreignUser: hardened.foreignUser });
  return { argv: [...hardened.head, ...bwrapArguments(mounts, { network: scope.policy.network === 'allow-all', cwd: options.cwd }), ...hardened.flags, '--', ...hardened.inner, ...options.argv] };
};
