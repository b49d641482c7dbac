import { printJson, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { CommonOptions } from '../command-options.js';
import type { McpServerSpec } from '../../mcp/mcp-config.js';
import { McpRuntimeConnection } from '../../mcp/mcp-connection.js';
import { McpError } from '../../mcp/mcp-errors.js';
import { mcpToolOf } from '../../mcp/mcp-tool.js';
import { loadProjectMcp, mcpServerEnvironment, type McpServerEnvironment } from '../../mcp/project-mcp.js';
import { TrustStore } from '../../trust/trust-store.js';
import { terminalText } from '../../util/terminal-text.js';

interface McpServerRow {
  name: string;
  file: string;
  /** The file's real path when it is a link leading elsewhere. */
  linksTo?: string;
  transport: string;
  state: string;
  trusted: boolean;
  /** The variables of the user's environment the server receives (names only). */
  environment?: McpServerEnvironment;
  tools?: number;
  error?: string;
}

/** `$OPENAI_API_KEY → env DOCS_LEVEL, …; inherits HOME, PATH` for a listing line (names only). */
const environmentText = (environment: McpServerEnvironment | undefined): string => {
  if (!environment) return '';
  const parts = [...environment.variables.map((entry) => `$${entry.name} → ${entry.into}${entry.credential ? ' (credential?)' : ''}`), ...(environment.inherited.length > 0 ? [`inherits ${environment.inherited.join(', ')}`] : [])];
  return parts.length > 0 ? `  [${terminalText(parts.join('; '))}]` : '';
};

const print = (lines: readonly string[]): void => {
  printText(lines.map((line) => `${line}\n`).join(''));
};

/** Connect to a server long enough to list its tools (with its connect timeout), then close it. */
const probe = async (workspace: string, spec: McpServerSpec) => {
  const connection = new McpRuntimeConnection(spec, { workspace, env: process.env, events: { toolsChanged: () => undefined, toolsFailed: () => undefined, closed: () => undefined } });
  try {
    return { ok: true as const, handshake: await connection.connect(), transport: connection.transportKind };
  } catch (error) {
    return { ok: false as const, error: (error as Error).message, transport: connection.transportKind };
  } finally {
    await connection.close();
  }
};

/** `rein mcp list`: every configured server, with its state (connecting briefly to each trusted one). */
export const mcpListCommand = async (options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const rows: McpServerRow[] = [];
  for (const file of await loadProjectMcp(workspace, new TrustStore())) {
    const trusted = file.status === 'trusted';
    for (const spec of file.servers) {
      const transport = 'url' in spec.config ? 'http' : 'stdio';
      const environment = mcpServerEnvironment(spec);
      const link = file.linksTo ? { linksTo: file.linksTo } : {};
      if (!trusted) {
        rows.push({ name: spec.name, file: file.file, ...link, transport, state: file.status === 'changed' ? 'untrusted (changed)' : 'untrusted', trusted, environment, error: 'not started: run `rein mcp trust` to trust this file as it is' });
        continue;
      }
      const probed = await probe(workspace, spec);
      rows.push(probed.ok ? { name: spec.name, file: file.file, ...link, transport: probed.transport, state: 'ready', trusted, environment, tools: probed.handshake.tools.length } : { name: spec.name, file: file.file, ...link, transport: probed.transport, state: 'failed', trusted, environment, error: probed.error });
    }
    for (const problem of file.problems) rows.push({ name: problem.name, file: file.file, transport: '-', state: 'invalid', trusted, error: problem.reason });
  }
  if (options.json) return rows.forEach(printJson);
  if (rows.length === 0) return print(['no MCP servers configured (rein.config.json or .mcp.json, "mcpServers")']);
  print(rows.map((row) => `${row.name}  ${row.transport}  ${row.state}  ${row.tools === undefined ? '-' : `${row.tools} tools`}  ${row.file}${row.linksTo ? ` (→ ${terminalText(row.linksTo)})` : ''}${environmentText(row.environment)}${row.error ? `  — ${row.error}` : ''}`));
};

/** `rein mcp tools <server>`: one trusted server's tools as the model would see them. */
export const mcpToolsCommand = async (server: string, options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const files = await loadProjectMcp(workspace, new TrustStore());
  const file = files.find((candidate) => candidate.servers.some((spec) => spec.name === server));
  const spec = file?.servers.find((candidate) => candidate.name === server);
  if (!file || !spec) throw new McpError('MCP_SERVER_NOT_FOUND', `no MCP server ${server} in rein.config.json or .mcp.json (configured: ${files.flatMap((entry) => entry.servers.map((candidate) => candidate.name)).join(', ') || 'none'})`);
  if (file.status !== 'trusted') throw new McpError('MCP_UNTRUSTED', `${file.file} is ${file.status === 'changed' ? 'changed since it was trusted' : 'not trusted'}: run \`rein mcp trust\` first`);
  const probed = await probe(workspace, spec);
  if (!probed.ok) throw new McpError('MCP_CONNECT_FAILED', `${server} did not come up: ${probed.error}`);
  const rows = probed.handshake.tools.map((tool) => {
    const mapped = mcpToolOf(tool, { server, call: async () => ({}) });
    if (!mapped.ok) return { tool: tool.name, problem: mapped.problem.reason };
    const { info } = mapped;
    return { name: info.name, tool: info.tool, readOnly: info.readOnly, destructive: info.destructive, openWorld: info.openWorld, tokens: info.tokens, description: tool.description ?? '' };
  });
  if (options.json) return rows.forEach(printJson);
  print(rows.map((row) => ('problem' in row ? `✗ ${row.tool}: ${row.problem}` : `${row.name}  ${row.readOnly ? 'read-only' : row.destructive ? 'destructive' : 'writes'}${row.openWorld ? ', open world' : ''}  ${row.description.split('\n')[0]!.slice(0, 100)}`)));
};

/** `rein mcp trust`: trust the workspace's MCP configuration as it is now. */
export const mcpTrustCommand = async (options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const trust = new TrustStore();
  const files = await loadProjectMcp(workspace, trust);
  for (const file of files) if (file.status !== 'trusted') await trust.trust(file.subject);
  const rows = files.map((file) => ({ file: file.file, digest: file.subject.digest, servers: file.servers.map((spec) => spec.name), environment: Object.fromEntries(file.servers.map((spec) => [spec.name, mcpServerEnvironment(spec)])), was: file.status }));
  if (options.json) return rows.forEach(printJson);
  print(rows.length === 0 ? ['no MCP configuration to trust (rein.config.json or .mcp.json, "mcpServers")'] : rows.flatMap((row) => [`trusted ${row.file} (${row.digest.slice(0, 19)}…): ${row.servers.join(', ') || 'no servers'}${row.was === 'trusted' ? ' (already trusted)' : ''}`, ...row.servers.flatMap((name) => { const text = environmentText(row.environment[name]); return text ? [`  ${name}${text}`] : []; })]));
};
