import type { CapabilityProblem } from '../../models/capability.records.js';
import type { CapabilityOptions } from '../capabilities/catalog.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';
import { describeMcpFile, loadProjectMcp } from '../mcp/project-mcp.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';
import { promptForTrust } from '../trust/trust-prompt.js';
import { TrustStore } from '../trust/trust-store.js';
import type { CapabilityFlags } from './command-options.js';
import { hostRunFiles } from './host-run-files.js';
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
    for (const spec of file.servers) mcpServers[spec.name] = { ...(await sandboxedIfLocal(workspace, spec.config as McpServerConfig)), origin: spec.origin } as McpServerConfig;
  }
  return { mcpServers, capabilities: { ...capabilities, ...(problems.length > 0 ? { problems } : {}) }, problems };
};

/**
 * A workspace file's local stdio server — one whose command or args name a file of the workspace (`node ./srv.mjs`) —
 * runs workspace code the model can edit (the modules it imports are not named anywhere), so unless the entry says
 * `"sandbox": false` it starts inside the sandbox. Other servers (`npx -y <package>`, a program elsewhere) run on the host.
 */
const sandboxedIfLocal = async (workspace: string, config: McpServerConfig): Promise<McpServerConfig> => {
  const stdio = config as { command?: unknown; sandbox?: boolean };
  if (typeof stdio.command !== 'string' || stdio.sandbox !== undefined) return config;
  return (await hostRunFiles(workspace, undefined, { server: config })).length > 0 ? ({ ...config, sandbox: true } as McpServerConfig) : config;
};
