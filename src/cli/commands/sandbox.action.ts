import { lstat } from 'node:fs/promises';
import { loadWorkspaceConfig } from '../../providers/provider-settings.js';
import { projectPluginFolders, workspacePlugins } from '../../plugins/workspace-plugins.js';
import { canonicalPath, isInside, protectedPathsOf as canonicalProtectedPaths } from '../../policy/protected-paths.js';
import { hardenSandbox } from '../../policy/sandbox-hardening.js';
import { sandboxUidRange, type SandboxIdentity } from '../../policy/sandbox-identity.js';
import { defaultSandboxPolicy, detectIsolation, limitPrefix, sandboxPrefix, unenforcedNetwork, type Enforcement, type SandboxPolicy } from '../../policy/sandbox-policy.js';
import { runtimeDirectory, sandboxHome, sandboxMounts, type SandboxMount } from '../../policy/sandbox-profile.js';
import { sandboxEnforcement } from '../../policy/sandbox-probe.js';
import type { McpServerConfig } from '../../mcp/mcp-config.js';
import { loadProjectMcp } from '../../mcp/project-mcp.js';
import { TrustStore } from '../../trust/trust-store.js';
import { printJson, protectedPathsOf, workspaceOf } from '../cli-context.js';
import { hostRunFiles } from '../host-run-files.js';
import { printText } from '../print-text.js';
import { sandboxOf } from '../permission-options.js';
import type { SandboxCommandOptions } from './sandbox.flags.js';

/** What `rein sandbox --json` prints: the enforcement the start-up probe found and the profile a command gets. */
export interface SandboxReport {
  enforcement: 'bubblewrap' | 'fallback';
  reason?: string;
  mode: SandboxPolicy['mode'];
  network: SandboxPolicy['network'];
  allowedHosts?: string[];
  loginShell: boolean;
  /** Whether the network policy holds (false: the fallback cannot make a network namespace; `networkReason` says why). */
  networkEnforced: boolean;
  networkReason?: string;
  /** Who the kernel sees running a command, and whether host-global kernel state is out of its reach. */
  user: ReportedEnforcement;
  kernel: ReportedEnforcement;
  /** Each limit and whether it binds here. */
  limits: { processes: ReportedLimit; memoryMb: ReportedLimit; tmpMb: ReportedLimit };
  binds: SandboxMount[];
  /**
   * The protected paths: `masked` when they exist and bubblewrap hides them from commands, `exposed` when they exist
   * but no OS sandbox runs (file tools still refuse them; a command could reach them), `absent` (removed again if a
   * command creates one), or `outside` the workspace.
   */
  protected: Array<{ path: string; state: 'masked' | 'exposed' | 'absent' | 'outside' }>;
}

/** One dimension of the report: enforced, and how; or not, and why. */
export type ReportedEnforcement = { enforced: true; mechanism: string } | { enforced: false; reason: string };
/** A limit: its value and whether it binds. */
export type ReportedLimit = ReportedEnforcement & { max: number };

const reported = (enforcement: Enforcement): ReportedEnforcement => (enforcement.enforced ? { enforced: true, mechanism: enforcement.mechanism ?? '' } : { enforced: false, reason: enforcement.reason ?? '' });

/** Who runs a command under bubblewrap here, in words that hold for every command (each gets its own uid as root). */
const userOf = (identity: SandboxIdentity): ReportedEnforcement => {
  if (identity.kind === 'invoking-user') return { enforced: true, mechanism: `the user rein runs as (uid ${identity.uid}), not root` };
  if (identity.kind === 'root') return { enforced: false, reason: `runs as root without capabilities: ${identity.reason}` };
  const last = sandboxUidRange.first + sandboxUidRange.count - 1;
  return { enforced: true, mechanism: `a fresh unprivileged uid per command (${sandboxUidRange.first}–${last}, used by nothing else); the workspace is an idmapped mount in which it owns uid ${identity.ownerUid}'s files, and files it creates are uid ${identity.ownerUid}'s on the host` };
};

/** The report for a policy and a workspace (the binds are those a `bash` call there would get). */
export const sandboxReport = async (policy: SandboxPolicy, workspace: string, protectedPaths: readonly string[]): Promise<SandboxReport> => {
  const status = await sandboxEnforcement(policy);
  const root = canonicalPath(workspace);
  const support = detectIsolation();
  const home = sandboxHome();
  const hardened = status.enforcement === 'bubblewrap' ? await hardenSandbox({ bubblewrap: policy.bubblewrap, workspace: root, home }) : undefined;
  const limits = hardened ? limitPrefix(policy, support, { unprivileged: hardened.identity.kind === 'mapped' }) : sandboxPrefix(policy, support);
  const unenforced = status.enforcement === 'fallback' ? unenforcedNetwork(policy, support) : null;
  const paths = canonicalProtectedPaths(root, protectedPaths);
  // Only bubblewrap masks a path: without it an existing one is within a command's reach, and the report says so.
  const existing = status.enforcement === 'bubblewrap' ? ('masked' as const) : ('exposed' as const);
  const states = await Promise.all(paths.map(async (path) => ({ path, state: !isInside(root, path) ? ('outside' as const) : (await lstat(path).then(() => true, () => false)) ? existing : ('absent' as const) })));
  return {
    enforcement: status.enforcement,
    ...(status.enforcement === 'fallback' ? { reason: status.reason } : {}),
    mode: policy.mode,
    network: policy.network,
    ...(policy.network === 'allow-list' ? { allowedHosts: [...policy.allowedHosts] } : {}),
    loginShell: policy.loginShell,
    networkEnforced: unenforced === null,
    ...(unenforced ? { networkReason: unenforced } : {}),
    user: hardened ? userOf(hardened.identity) : support.root ? { enforced: false, reason: 'no sandbox: commands run as root, with every capability rein has' } : { enforced: true, mechanism: `the user rein runs as (uid ${process.getuid?.() ?? '?'}), not root` },
    kernel: hardened ? reported(hardened.kernel) : { enforced: false, reason: 'no sandbox: /proc and /sys are the host\'s' },
    limits: {
      processes: { max: policy.maxProcesses, ...reported(limits.processes) },
      memoryMb: { max: policy.maxMemoryMb, ...reported(limits.memory) },
      tmpMb: { max: policy.maxTmpMb, ...(hardened ? { enforced: true as const, mechanism: 'tmpfs size, each of /tmp, the home and /dev/shm' } : { enforced: false as const, reason: 'no sandbox: /tmp is the host\'s' }) },
    },
    binds: hardened ? sandboxMounts({ workspace: root, workspaceWritable: true, protectedPaths: paths, home, toolDirectories: [runtimeDirectory()], tmpSizeMb: policy.maxTmpMb, foreignUser: hardened.foreignUser }) : [],
    protected: states,
  };
};

const describeMount = (mount: SandboxMount): string => {
  switch (mount.kind) {
    case 'ro-bind':
    case 'bind':
      return `${mount.kind === 'bind' ? 'read-write' : 'read-only '} ${mount.target}${mount.source === mount.target ? '' : ` ← ${mount.source}`}`;
    case 'symlink':
      return `symlink    ${mount.target} → ${mount.link}`;
    case 'tmpfs':
      return `empty      ${mount.target}${mount.sizeMb === undefined ? '' : ` (at most ${mount.sizeMb} MB)`}`;
    case 'remount-ro':
      return `read-only  ${mount.target} (remounted)`;
    case 'dir':
      return `folder     ${mount.target}`;
    case 'proc':
    case 'dev':
      return `minimal    ${mount.target}`;
    default:
      return `masked     ${mount.target}`;
  }
};

const enforcementLine = (enforcement: ReportedEnforcement): string => (enforcement.enforced ? `enforced (${enforcement.mechanism})` : `not enforced: ${enforcement.reason}`);

/** The body of `rein sandbox` (see `registerSandbox`). */
export const sandboxCommand = async (options: SandboxCommandOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const policy: SandboxPolicy = { ...defaultSandboxPolicy, ...sandboxOf(options, (await loadWorkspaceConfig(workspace))?.sandbox) };
  // The folders of the project's plugins are protected for a session here (discovered, never loaded), and so are the
  // workspace files its trusted hooks and MCP servers run (read, never started).
  const loaded = await workspacePlugins({ workspace });
  const trustedServers: Record<string, McpServerConfig> = {};
  for (const file of await loadProjectMcp(workspace, new TrustStore())) if (file.status === 'trusted') for (const spec of file.servers) trustedServers[spec.name] = spec.config as McpServerConfig;
  const report = await sandboxReport(policy, workspace, [...(await protectedPathsOf(options, workspace)), ...projectPluginFolders(loaded.plugins, workspace), ...(await hostRunFiles(workspace, loaded.hooks, trustedServers))]);
  if (options.json) return printJson(report);
  const lines = [
    report.enforcement === 'bubblewrap' ? 'enforcement: bubblewrap (commands see only what is listed below)' : `enforcement: fallback — ${report.reason}`,
    `mode: ${report.mode}${report.mode === 'required' && report.enforcement === 'fallback' ? ' (bash is refused)' : ''}`,
    `network: ${report.network}${report.allowedHosts ? ` (${report.allowedHosts.join(', ') || 'no hosts'})` : ''}${report.networkEnforced ? '' : `: not enforced (${report.networkReason})${report.mode === 'off' ? '' : ' — bash is refused unless --sandbox off or --network allow-all'}`}`,
    `user: ${enforcementLine(report.user)}`,
    `kernel: ${enforcementLine(report.kernel)}`,
    `processes: at most ${report.limits.processes.max} at once, ${enforcementLine(report.limits.processes)}`,
    `memory: at most ${report.limits.memoryMb.max} MB per process, ${enforcementLine(report.limits.memoryMb)}`,
    `tmp: at most ${report.limits.tmpMb.max} MB, ${enforcementLine(report.limits.tmpMb)}`,
    `shell: ${report.loginShell ? 'bash -lc (login shell)' : 'bash -c'}`,
    'protected paths (file tools refuse them, commands never run unasked when they name them):',
    ...report.protected.map((entry) => `  ${entry.path}  — ${entry.state === 'masked' ? 'masked in the sandbox' : entry.state === 'exposed' ? 'exists; not hidden from commands without the sandbox' : entry.state === 'absent' ? 'absent; removed again if a command creates it' : 'outside the workspace'}`),
    ...(report.binds.length > 0 ? ['binds:', ...report.binds.map((mount) => `  ${describeMount(mount)}  — ${mount.why}`)] : ['binds: none (no OS sandbox: commands see the whole file system; rein kills their process tree and limits them with prlimit and unshare where it can)']),
  ];
  printText(`${lines.join('\n')}\n`);
};
