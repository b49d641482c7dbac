import * as z from 'zod';
import type { McpOrigin } from '../../models/mcp.records.js';
import { mcpServerName } from './mcp-names.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** A stdio server: a command rein starts (on the host unless `sandbox`: it is the user's configuration). */
export const McpStdioConfig = lazySchema(() => z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Added to the SDK's default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER); `${VAR}` expands. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  /**
   * rein's extension: `true` starts the server inside bubblewrap (`sandboxedProgram`), `false` on the host. Unset: on
   * the host, except that the CLI reads a workspace file's local server (one whose command or args name a workspace
   * file) as `true`.
   */
  sandbox: z.boolean().optional(),
}));

/** A Streamable HTTP server; `${VAR}` in headers expands from the environment. */
export const McpHttpConfig = lazySchema(() => z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
}));

/** Fields every entry may carry (rein's own, and `disabled` as other harnesses write it); built with the entry schema, on first use. */
const common = () => ({
  /** Skip this server. */
  disabled: z.boolean().optional(),
  /** A tool call (or a resource read) gets no answer for this long: `Timeout` (ms, default 60,000; progress resets it). */
  timeout: z.number().int().positive().optional(),
  /** Connecting (start, handshake, tool list) takes longer than this: the server failed (ms, default 30,000). */
  connectTimeout: z.number().int().positive().optional(),
});

/**
 * One entry of `mcpServers` as `.mcp.json` and `rein.config.json` write it: `{ command, args?, env?, cwd? }` (stdio)
 * or `{ type: "http", url, headers? }`. Other fields other harnesses write are ignored.
 */
export const McpServerEntry = lazySchema(() => z.union([McpStdioConfig.extend(common()), McpHttpConfig.extend(common())]));
export type McpServerEntry = z.infer<typeof McpServerEntry>;

/** An in-process server of the host app: rein hands it one end of the SDK's in-memory transport per session. */
export interface McpInMemoryConfig {
  type: 'in-memory';
  /** Connect a server to this transport (e.g. `(transport) => makeServer().connect(transport)`); once per session. */
  connect(transport: unknown): Promise<void>;
  timeout?: number;
  connectTimeout?: number;
  disabled?: boolean;
}

/** What `createRein({ mcpServers })` takes: the file shapes, or an in-process server; `origin` defaults to the host. */
export type McpServerConfig = (McpServerEntry | McpInMemoryConfig) & { origin?: McpOrigin };

/** One server, resolved for a session: its name, its configuration and where that came from. */
export interface McpServerSpec {
  name: string;
  config: McpServerEntry | McpInMemoryConfig;
  origin: McpOrigin;
}

/** A configured server rein will not start, and why (shown by `rein mcp list`). */
export interface McpConfigProblem {
  name: string;
  file?: string;
  reason: string;
}

const isInMemory = (value: unknown): value is McpInMemoryConfig => typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'in-memory' && typeof (value as { connect?: unknown }).connect === 'function';

/**
 * Check a `mcpServers` object: each entry a stdio or HTTP server (or, from a host, an in-memory one) under a usable
 * name. Entries that are disabled, malformed, named unusably or of an unsupported type (`sse`) become problems;
 * the rest become specs with `origin`.
 */
export const parseMcpServers = (value: unknown, origin: McpOrigin): { servers: McpServerSpec[]; problems: McpConfigProblem[] } => {
  const servers: McpServerSpec[] = [];
  const problems: McpConfigProblem[] = [];
  const file = origin.file ? { file: origin.file } : {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { servers, problems: [{ name: '*', ...file, reason: 'mcpServers must be an object of named servers' }] };
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    if (!mcpServerName.test(name)) {
      problems.push({ name, ...file, reason: `the name must match ${mcpServerName} (it names tools and actor paths)` });
      continue;
    }
    if (isInMemory(entry)) {
      if (!entry.disabled) servers.push({ name, config: entry, origin: (entry as McpServerConfig).origin ?? origin });
      continue;
    }
    const type = (entry as { type?: unknown } | null)?.type;
    if (type === 'sse') {
      problems.push({ name, ...file, reason: 'the SSE transport is deprecated and not supported: use "type": "http" (Streamable HTTP)' });
      continue;
    }
    // `{ "url": … }` without a type is how some other clients write an HTTP server: say what is missing.
    if (type === undefined && typeof (entry as { url?: unknown } | null)?.url === 'string' && (entry as { command?: unknown }).command === undefined) {
      problems.push({ name, ...file, reason: 'an entry with a "url" needs "type": "http" (Streamable HTTP); rein does not guess the transport' });
      continue;
    }
    const parsed = McpServerEntry.safeParse(entry);
    if (!parsed.success) {
      problems.push({ name, ...file, reason: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`).join('; ') });
      continue;
    }
    if (parsed.data.disabled) continue;
    servers.push({ name, config: parsed.data, origin: (entry as McpServerConfig).origin ?? origin });
  }
  return { servers, problems };
};

/** `${VAR}` and `${VAR:-default}` in a string. */
const variablePattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The environment variable names a string refers to. */
export const variablesIn = (text: string): string[] => [...text.matchAll(variablePattern)].map((match) => match[1]!);

/**
 * Expand `${VAR}` (and `${VAR:-default}`) from `env`. A variable that is unset and has no default is an error naming
 * it — never a silently empty credential.
 */
export const expandVariables = (text: string, env: NodeJS.ProcessEnv): { ok: true; value: string } | { ok: false; missing: string } => {
  let missing: string | undefined;
  const value = text.replace(variablePattern, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    missing ??= name;
    return '';
  });
  return missing ? { ok: false, missing } : { ok: true, value };
};

/** Expand every value of a record (env, headers); the first missing variable is an error. */
export const expandRecord = (record: Readonly<Record<string, string>> | undefined, env: NodeJS.ProcessEnv): { ok: true; value: Record<string, string> } | { ok: false; missing: string } => {
  const value: Record<string, string> = {};
  for (const [key, text] of Object.entries(record ?? {})) {
    const expanded = expandVariables(text, env);
    if (!expanded.ok) return expanded;
    value[key] = expanded.value;
  }
  return { ok: true, value };
};
