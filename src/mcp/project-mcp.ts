import { createHash } from 'node:crypto';
import { terminalText } from '../util/terminal-text.js';
import { realpath } from 'node:fs/promises';
import { readHostTextIfPresent } from '../util/read-regular-file.js';
import { join } from 'node:path';
import { canonicalJson } from '../../machines/typestate/canonical-json.js';
import { ReinError } from '../host/host-errors.js';
import type { TrustStatus, TrustStore, TrustSubject } from '../trust/trust-store.js';
import { parseMcpServers, variablesIn, type McpConfigProblem, type McpServerSpec } from './mcp-config.js';
import { jsonProblem } from '../util/json-problem.js';

/** The project files that may configure MCP servers, in precedence order (a name in an earlier file wins). */
export const projectMcpFiles = ['rein.config.json', '.mcp.json'] as const;

/** One project file's MCP servers, its digest and whether the user trusts that content. */
export interface ProjectMcpFile {
  /** Workspace-relative name (`.mcp.json`). */
  file: string;
  /** Where the file really is, when it is a link leading elsewhere (its trust is still this workspace's). */
  linksTo?: string;
  subject: TrustSubject;
  status: TrustStatus;
  servers: McpServerSpec[];
  problems: McpConfigProblem[];
}

/** The digest a trust decision is bound to: SHA-256 of the canonical JSON of the file's `mcpServers`. */
export const mcpServersDigest = (servers: unknown): string => `sha256:${createHash('sha256').update(canonicalJson(servers)).digest('hex')}`;

const readJson = async (path: string): Promise<unknown> => {
  const text = await readHostTextIfPresent(path, path, (message) => new ReinError('CONFIG_INVALID', message));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ReinError('CONFIG_INVALID', `${path} is not valid JSON (${jsonProblem(text, error)})`, { cause: error });
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
    const real = await realpath(path);
    files.push({ file, ...(real === subject.path ? {} : { linksTo: real }), subject, status: await trust.status(subject), servers: kept, problems: parsed.problems });
  }
  return files;
};

/**
 * The variables a stdio server inherits from rein's environment as they are: the MCP SDK's default environment
 * (`DEFAULT_INHERITED_ENV_VARS` of `@modelcontextprotocol/client/stdio` on POSIX; a test keeps the two equal). Listed
 * here so describing a file does not load the SDK.
 */
export const inheritedServerVariables = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'] as const;

/** A variable name that looks like it holds a credential (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, …). */
export const credentialLike = (name: string): boolean => /KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|(^|_)PAT($|_)/i.test(name);

/**
 * What of the user's environment one server receives: each `${VAR}` of rein's environment and where it goes
 * (`env DOCS_LEVEL`, `header X-Trace`, `url`, `command`, `args`), the `env` entries set to a fixed value, and the
 * variables a stdio server inherits as they are. Names only: no value is ever read here.
 */
export interface McpServerEnvironment {
  variables: Array<{ name: string; into: string; credential: boolean }>;
  fixed: string[];
  inherited: string[];
}

/** What of `env` (rein's environment) `spec` would receive when started; see `McpServerEnvironment`. */
export const mcpServerEnvironment = (spec: McpServerSpec, env: NodeJS.ProcessEnv = process.env): McpServerEnvironment => {
  const config = spec.config as { type?: string; command?: string; args?: string[]; url?: string; env?: Record<string, string>; headers?: Record<string, string> };
  const variables: McpServerEnvironment['variables'] = [];
  const fixed: string[] = [];
  const add = (text: string, into: string): boolean => {
    const names = [...new Set(variablesIn(text))];
    for (const name of names) variables.push({ name, into, credential: credentialLike(name) });
    return names.length > 0;
  };
  if (config.type === 'in-memory') return { variables, fixed, inherited: [] };
  if (config.url !== undefined) {
    add(config.url, 'url');
    for (const [header, value] of Object.entries(config.headers ?? {})) add(value, `header ${header}`);
    return { variables, fixed, inherited: [] };
  }
  add(config.command ?? '', 'command');
  for (const arg of config.args ?? []) add(arg, 'args');
  for (const [name, value] of Object.entries(config.env ?? {})) if (!add(value, `env ${name}`)) fixed.push(name);
  // The SDK passes these on as they are (when set); an `env` entry of the same name replaces it.
  const inherited = inheritedServerVariables.filter((name) => env[name] !== undefined && !(name in (config.env ?? {})));
  return { variables, fixed, inherited };
};

/** One line on a server's environment for the terminal: `env DOCS_LEVEL ← $OPENAI_API_KEY (credential?)`, … */
export const describeServerEnvironment = (environment: McpServerEnvironment): string[] => [
  ...environment.variables.map((entry) => `${entry.into} ← $${entry.name}${entry.credential ? '  (looks like a credential)' : ''}`),
  ...environment.fixed.map((name) => `env ${name} (a fixed value from the file)`),
  ...(environment.inherited.length > 0 ? [`inherits ${environment.inherited.join(', ')} from your environment`] : []),
];

/**
 * How a project file's servers are described when the user is asked to trust it: names, commands, URLs, and which of
 * the user's environment variables each server receives (names, never values).
 */
export const describeMcpFile = (file: ProjectMcpFile, env: NodeJS.ProcessEnv = process.env): string => {
  const lines = file.servers.flatMap((spec) => {
    const config = spec.config as { command?: string; args?: string[]; url?: string; sandbox?: boolean };
    const where = config.sandbox === false ? '   [on the host]' : config.sandbox === true ? '   [in the sandbox]' : '';
    const what = (config.url ? `http ${config.url}` : `${config.command ?? ''} ${(config.args ?? []).join(' ')}`.trim()) + where;
    // Quoted from the file: a line break or an escape in a command or a name is shown, never obeyed.
    return [`  ${terminalText(spec.name)}: ${terminalText(what)}`, ...describeServerEnvironment(mcpServerEnvironment(spec, env)).map((line) => `      ${terminalText(line)}`)];
  });
  const change = file.status === 'changed' ? ' It changed since you trusted it.' : '';
  const link = file.linksTo ? ` (a link to ${terminalText(file.linksTo)}: trusting it here trusts it for this workspace only)` : '';
  return `${file.file}${link} asks rein to start ${file.servers.length} MCP server(s); they receive the variables of your environment listed under each, and run with your permissions outside the bash sandbox — except a local server (its command or args name a file of this workspace), which runs inside the sandbox unless it says "sandbox": false.${change}\n${lines.join('\n')}`;
};
