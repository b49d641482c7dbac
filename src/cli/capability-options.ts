import type { CapabilityProblem } from '../../models/capability.records.js';
import type { CapabilityOptions } from '../capabilities/catalog.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';
import { describeMcpFile, loadProjectMcp } from '../mcp/project-mcp.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';
import { promptForTrust } from '../trust/trust-prompt.js';
import { TrustStore } from '../trust/trust-store.js';
import type { CapabilityFlags } from './command-options.js';
import { hostRunFiles } from './host-run-files.js';
import { ReinError } from '../host/host-errors.js';
import { parseLauncher, resolveLauncher, type UnreadableLauncher } from '../mcp/package-launcher.js';
import { positiveFlag } from './whole-number-flag.js';
import { printText } from './print-text.js';

/** Ask a person whether to trust something (the ACP client's permission request, where there is no terminal). */
export type TrustQuestion = (description: string, question: string) => Promise<boolean>;

/** What a session of this CLI run gets: the trusted project MCP servers, the discovery policy, and what was skipped. */
export interface CliCapabilities {
  mcpServers: Record<string, McpServerConfig>;
  capabilities: CapabilityOptions;
  /** Untrusted files and unusable entries, for the session's catalog and a warning on stderr. */
  problems: CapabilityProblem[];
}

/** `--visible-limit` as a number (undefined when absent); anything but a positive integer is `USAGE`. */
export const visibleLimitOf = (flags: CapabilityFlags): number | undefined => {
  return positiveFlag('--visible-limit', flags.visibleLimit === undefined ? undefined : String(flags.visibleLimit));
};

/**
 * Resolve the workspace's capabilities for a session: the discovery policy from `--visible-limit` and
 * `rein.config.json`, and the MCP servers of `rein.config.json` and `.mcp.json` whose content the user trusts. A file
 * not yet trusted (or changed since) is trusted by `--yes`, or by answering the prompt on a TTY — both recorded in the
 * trust store with the file's digest; otherwise its servers do not start, and stderr says how to trust it.
 */
export const cliCapabilitiesFor = async (workspace: string, flags: CapabilityFlags, io: { interactive: boolean; trust?: TrustStore; ask?: TrustQuestion; warn?: (text: string) => void } = { interactive: Boolean(process.stdin.isTTY) }): Promise<CliCapabilities> => {
  const config = await loadWorkspaceConfig(workspace);
  const limit = visibleLimitOf(flags);
  const capabilities: CapabilityOptions = { ...config?.capabilities, ...(limit === undefined ? {} : { visibleLimit: limit }) };
  const trust = io.trust ?? new TrustStore();
  const mcpServers: Record<string, McpServerConfig> = {};
  const problems: CapabilityProblem[] = [];
  for (const file of await loadProjectMcp(workspace, trust)) {
    for (const problem of file.problems) problems.push({ source: `${file.file}: ${problem.name}`, reason: problem.reason });
    if (file.servers.length === 0) continue;
    let trusted = file.status === 'trusted';
    if (!trusted && flags.yes) trusted = true;
    else if (!trusted && io.ask) trusted = await io.ask(describeMcpFile(file), `trust the MCP servers of ${file.file}?`);
    else if (!trusted && io.interactive) trusted = await promptForTrust(describeMcpFile(file), { input: process.stdin, output: process.stderr });
    if (trusted && file.status !== 'trusted') await trust.trust(file.subject);
    if (!trusted) {
      const reason = `${file.status === 'changed' ? 'changed since it was trusted' : 'not trusted'}: its ${file.servers.length} MCP server(s) did not start (trust it with \`rein mcp trust\` or --yes)`;
      problems.push({ source: file.file, reason });
      if (io.warn) io.warn(`${file.file} is ${reason}`);
      else printText(`rein: ${file.file} is ${reason}\n`, process.stderr);
      continue;
    }
    for (const spec of file.servers) {
      const launch = await launchOutsideWorkspace(workspace, spec.config as McpServerConfig);
      if ('problem' in launch) {
        problems.push({ source: `${file.file}: ${spec.name}`, reason: launch.problem });
        printText(`rein: the MCP server ${spec.name} of ${file.file} did not start: ${launch.problem}\n`, process.stderr);
        continue;
      }
      mcpServers[spec.name] = { ...launch.config, origin: spec.origin } as McpServerConfig;
    }
  }
  return { mcpServers, capabilities: { ...capabilities, ...(problems.length > 0 ? { problems } : {}) }, problems };
};

/**
 * Where a workspace file's stdio server runs, so that no file the model can write decides what it runs:
 * - a package launcher (`npx -y <pkg>`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`) resolves from the workspace, so
 *   rein installs the package into its own packages folder and starts its program there (`resolveLauncher`) — on the
 *   host as before, unless the entry says `"sandbox": true`; a launcher whose options rein cannot read runs in the
 *   sandbox, and with `"sandbox": false` it does not start (rein asks for the entry to change rather than run it);
 * - a local server — one whose command or args name a file of the workspace (`node ./srv.mjs`) — runs workspace code
 *   the model can edit (the modules it imports are not named anywhere), so unless the entry says `"sandbox": false`
 *   it starts inside the sandbox. Other servers (a program elsewhere) run on the host.
 */
export const launchOutsideWorkspace = async (workspace: string, config: McpServerConfig): Promise<{ config: McpServerConfig } | { problem: string }> => {
  const stdio = config as { command?: unknown; args?: string[]; sandbox?: boolean };
  if (typeof stdio.command !== 'string' || stdio.sandbox === true) return { config };
  const argv = [stdio.command, ...(stdio.args ?? [])];
  const call = parseLauncher(argv) ?? launcherInside(argv);
  if (call && 'packages' in call) {
    try {
      const resolved = await resolveLauncher(call, { workspace });
      return { config: { ...config, command: resolved.argv[0]!, args: [...resolved.argv.slice(1), ...call.args] } as McpServerConfig };
    } catch (error) {
      if (error instanceof ReinError) return { problem: error.message };
      throw error;
    }
  }
  if (call) {
    if (stdio.sandbox === false) return { problem: `${call.unreadable}, so it would resolve what it runs from the workspace, which the model can write; it asks for the host ("sandbox": false): set "sandbox": true, or start the package's program by its path` };
    return { config: { ...config, sandbox: true } as McpServerConfig };
  }
  if (stdio.sandbox !== undefined) return { config };
  return { config: (await hostRunFiles(workspace, undefined, { server: config })).length > 0 ? ({ ...config, sandbox: true } as McpServerConfig) : config };
};

/** A launcher inside an argument that is itself a command line (`sh -c "npx -y pkg"`): never one rein can rewrite. */
const launcherInside = (argv: readonly string[]): UnreadableLauncher | undefined => {
  const words = argv.slice(1).flatMap((arg) => arg.split(/[\s;&|()`$'"]+/));
  const at = words.findIndex((word, index) => ['npx', 'bunx', 'pnpx'].includes(word) || (['npm', 'pnpm', 'yarn', 'bun'].includes(word) && ['exec', 'x', 'dlx'].includes(words[index + 1] ?? '')));
  return at === -1 ? undefined : { launcher: words[at]!, unreadable: `${words[at]} runs inside a command line` };
};
