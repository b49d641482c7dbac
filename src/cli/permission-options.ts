import { configFileName } from '../providers/config-file-name.js';
import { PermissionMode } from '../../models/permission.records.js';
import { ReinError } from '../host/host-errors.js';
import type { PermissionsConfig } from '../policy/permission-policy.js';
import { parseRule, type PermissionRule } from '../policy/permission-rules.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { defaultSandboxPolicy, type NetworkPolicy, type SandboxPolicy } from '../policy/sandbox-policy.js';
import { mergeSandboxConfig, SandboxConfig, sandboxLimits, type SandboxLimit } from '../policy/sandbox-config.js';
import { broadHostReason } from '../policy/host-addresses.js';
import type { PermissionOptions, SandboxOptions } from './command-options.js';
import { wholeNumberFlag } from './whole-number-flag.js';

export type { PermissionOptions } from './command-options.js';

/** Tool-name prefixes that discovery fills at run time (an MCP server's tools); rules may name them before they exist. */
export const discoveredNamespaces: readonly string[] = ['mcp__'];

/**
 * A rule's tool must be `*`, a tool rein has, in a discovered namespace, or a plugin's (`<plugin>__<tool>`: plugins
 * load after the flags are read): a typo would otherwise never match. A deny or ask rule naming a namespaced tool the
 * session does not have is said once the tools are known (`permission.rule-unmatched`).
 */
const checkTool = (flag: string, text: string, rule: PermissionRule, known: readonly string[]): PermissionRule => {
  if (rule.tool === '*' || known.includes(rule.tool) || discoveredNamespaces.some((prefix) => rule.tool.startsWith(prefix)) || rule.tool.includes('__')) return rule;
  throw new ReinError('USAGE', `${flag} ${JSON.stringify(text)}: there is no tool ${JSON.stringify(rule.tool)}; the tools are ${known.join(', ')} (or * for every tool, ${discoveredNamespaces.map((prefix) => `${prefix}…`).join(', ')} for discovered ones, or <plugin>__<tool> for a plugin's)`);
};

/**
 * The permission configuration the flags describe; a bad mode or rule is a usage error, and so is a rule naming a
 * tool that is neither one of `tools` (default: the built-in tools and `submit_report`), `*`, nor a discovered one.
 */
export const permissionsOf = (options: PermissionOptions, tools: readonly string[] = [...builtinTools().map((tool) => tool.name), 'submit_report']): PermissionsConfig => {
  const mode = options.mode === undefined ? undefined : PermissionMode.safeParse(options.mode);
  if (mode && !mode.success) throw new ReinError('USAGE', `--mode must be default, plan or accept-edits, got ${JSON.stringify(options.mode)}`);
  return {
    ...(mode?.success ? { mode: mode.data } : {}),
    rules: [
      ...(options.deny ?? []).map((rule) => ({ ...checkTool('--deny', rule, parseRule(rule, 'deny'), tools), action: 'deny' as const, source: 'rule' as const })),
      ...(options.approve ?? []).map((rule) => ({ ...checkTool('--approve', rule, parseRule(rule, 'allow'), tools), action: 'allow' as const, source: 'pre-approved' as const })),
    ],
    approveAll: Boolean(options.yes),
  };
};

/**
 * The sandbox settings: the flags over the `sandbox` object of `rein.config.json`. A bad mode, network policy or
 * host name is a usage error.
 */
export const sandboxOf = (options: PermissionOptions, file?: SandboxConfig): Partial<SandboxPolicy> => {
  const flags = SandboxConfig.safeParse({
    ...(options.sandbox === undefined ? {} : { mode: options.sandbox }),
    ...(options.network === undefined ? {} : { network: options.network }),
    ...(options.allowHost === undefined ? {} : { allowedHosts: options.allowHost }),
    ...(options.loginShell ? { loginShell: true } : {}),
    ...limitFlags(options),
  });
  if (!flags.success) {
    const issue = flags.error.issues[0]!;
    const flag = { mode: '--sandbox', network: '--network', allowedHosts: '--allow-host', loginShell: '--login-shell' }[String(issue.path[0]) as 'mode'] ?? 'a sandbox flag';
    throw new ReinError('USAGE', `${flag}: ${issue.message} (--sandbox auto|required|off, --network disabled|allow-list|allow-all, --allow-host <name>)`);
  }
  if (file) checkFileSandbox(flags.data, file);
  return mergeSandboxConfig(flags.data, file);
};

/** The limit flags among `options`, as given (for passing them on). */
export const limitOptions = (options: SandboxOptions): Pick<SandboxOptions, 'maxProcesses' | 'maxMemoryMb' | 'maxTmpMb'> => ({
  ...(options.maxProcesses === undefined ? {} : { maxProcesses: options.maxProcesses }),
  ...(options.maxMemoryMb === undefined ? {} : { maxMemoryMb: options.maxMemoryMb }),
  ...(options.maxTmpMb === undefined ? {} : { maxTmpMb: options.maxTmpMb }),
});

/** The limit flags (`--max-processes 64`) as numbers; a value that is not a whole number in range is `USAGE`. */
const limitFlags = (options: SandboxOptions): Partial<Record<SandboxLimit, number>> => {
  const given: Partial<Record<SandboxLimit, number>> = {};
  for (const [name, { flag, min, max }] of Object.entries(sandboxLimits) as Array<[SandboxLimit, (typeof sandboxLimits)[SandboxLimit]]>) {
    const value = wholeNumberFlag(options[name], { min, max, message: `${flag} must be a whole number from ${min} to ${max}` });
    if (value !== undefined) given[name] = value;
  }
  return given;
};

/**
 * What a workspace file's limits would widen: a limit above the default (`maxProcesses: 100000`) is the user's to
 * say with its flag, which then decides; one at or below the default narrows and stands.
 */
export const fileLimitWidening = (flags: SandboxConfig, file: SandboxConfig): string[] =>
  (Object.keys(sandboxLimits) as SandboxLimit[]).flatMap((name) => {
    const value = file[name];
    if (flags[name] !== undefined || value === undefined || value <= defaultSandboxPolicy[name]) return [];
    return [`raises ${sandboxLimits[name].what} to ${value}, above the default ${defaultSandboxPolicy[name]} (confirm with ${sandboxLimits[name].flag} ${value})`];
  });

/**
 * A workspace's `rein.config.json` comes with the repository: on its own it may narrow the sandbox (`mode:
 * "required"`, `network: "disabled"`) or name the hosts a command may reach (`allow-list`, shown on the sandbox line),
 * but turning it off, opening the network to every host or using a login shell is the user's to say with the flag
 * (`--sandbox off`, `--network allow-all`, `--login-shell`), which then decides; a file that asks for one of those
 * when no flag decided is `USAGE` naming the flag. Its host list may not name this machine (`localhost`, `127.0.0.1`,
 * `[::1]`, `169.254.169.254`, an interface's address: the proxy runs on the host, outside the sandbox), a private
 * network's address or a wildcard over a top-level domain (`*.com`) unless `--allow-host` (whose list then replaces the
 * file's) says so.
 */
const checkFileSandbox = (flags: SandboxConfig, file: SandboxConfig): void => {
  const widening: string[] = [...fileLimitWidening(flags, file)];
  if (flags.mode === undefined && file.mode === 'off') widening.push('turns the sandbox off (confirm with --sandbox off)');
  if (flags.network === undefined && file.network === 'allow-all') widening.push('opens the network to every host (confirm with --network allow-all)');
  if (flags.loginShell === undefined && file.loginShell === true) widening.push('runs commands in a login shell (confirm with --login-shell)');
  if (flags.allowedHosts === undefined) {
    const broad = (file.allowedHosts ?? []).flatMap((entry) => {
      const reason = broadHostReason(entry);
      return reason === undefined ? [] : [`${entry} (${reason})`];
    });
    if (broad.length > 0) widening.push(`lets commands reach ${broad.join(', ')} (confirm with --allow-host for each host you mean)`);
  }
  if (widening.length > 0) throw new ReinError('USAGE', `${configFileName} ${widening.join(' and ')}: a workspace file may only narrow the sandbox`);
};
