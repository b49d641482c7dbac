import { createHash } from 'node:crypto';
import { terminalText } from '../util/terminal-text.js';
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../../machines/typestate/canonical-json.js';
import { ReinError } from '../host/host-errors.js';
import type { TrustStatus, TrustStore, TrustSubject } from '../trust/trust-store.js';
import { parseMcpServers, type McpConfigProblem, type McpServerSpec } from './mcp-config.js';

/** The project files that may configure MCP servers, in precedence order (a name in an earlier file wins). */
export const projectMcpFiles = ['rein.config.json', '.mcp.json'] as const;

/** One project file's MCP servers, its digest and whether the user trusts that content. */
export interface ProjectMcpFile {
  /** Workspace-relative name (`.mcp.json`). */
  file: string;
  subject: TrustSubject;
  status: TrustStatus;
  servers: McpServerSpec[];
  problems: McpConfigProblem[];
}

/** The digest a trust decision is bound to: SHA-256 of the canonical JSON of the file's `mcpServers`. */
export const mcpServersDigest = (servers: unknown): string => `sha256:${createHash('sha256').update(canonicalJson(servers)).digest('hex')}`;

const readJson = async (path: string): Promise<unknown> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ReinError('CONFIG_INVALID', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ReinError('CONFIG_INVALID', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
};

/**
 * Read the workspace's MCP configuration — `mcpServers` of `rein.config.json`, then of `.mcp.json` (the shape other
 * harnesses use, so a copied file works) — with each file's trust status. A server name defined twice keeps the
 * first file's entry (the later one is a problem). Files without `mcpServers` are left out.
 */
export const loadProjectMcp = async (workspace: string, trust: TrustStore): Promise<ProjectMcpFile[]> => {
  const files: ProjectMcpFile[] = [];
  const taken = new Map<string, string>();
  const root = await realpath(workspace);
  for (const file of projectMcpFiles) {
    const path = join(workspace, file);
    const value = await readJson(path);
    if (value === undefined || typeof value !== 'object' || value === null || !('mcpServers' in value)) continue;
    const servers = (value as { mcpServers: unknown }).mcpServers;
    // Trust is bound to where the servers run — the file's place in this workspace, never a link's target: a
    // repository whose `.mcp.json` links to another project's trusted file would start its own `./srv.js` under it.
    const subject: TrustSubject = { kind: 'mcp', path: join(root, file), digest: mcpServersDigest(servers) };
    const parsed = parseMcpServers(servers, { kind: 'project', file, digest: subject.digest });
    const kept: McpServerSpec[] = [];
    for (const spec of parsed.servers) {
      const earlier = taken.get(spec.name);
      if (earlier) parsed.problems.push({ name: spec.name, file, reason: `${earlier} defines ${spec.name} too; that entry is used` });
      else {
        taken.set(spec.name, file);
        kept.push(spec);
      }
    }
    files.push({ file, subject, status: await trust.status(subject), servers: kept, problems: parsed.problems });
  }
  return files;
};

/** How a project file's servers are described when the user is asked to trust it (names, commands, URLs — no values). */
export const describeMcpFile = (file: ProjectMcpFile): string => {
  const lines = file.servers.map((spec) => {
    const config = spec.config as { command?: string; args?: string[]; url?: string; env?: Record<string, string>; headers?: Record<string, string> };
    const what = config.url ? `http ${config.url}` : `${config.command ?? ''} ${(config.args ?? []).join(' ')}`.trim();
    const names = [...Object.keys(config.env ?? {}).map((name) => `env ${name}`), ...Object.keys(config.headers ?? {}).map((name) => `header ${name}`)];
    // Quoted from the file: a line break or an escape in a command or a name is shown, never obeyed.
    return `  ${terminalText(spec.name)}: ${terminalText(what)}${names.length > 0 ? ` (${terminalText(names.join(', '))})` : ''}`;
  });
  const change = file.status === 'changed' ? ' It changed since you trusted it.' : '';
  return `${file.file} asks rein to start ${file.servers.length} MCP server(s); they run with your permissions, outside the bash sandbox.${change}\n${lines.join('\n')}`;
};
