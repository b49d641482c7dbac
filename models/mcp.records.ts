import * as z from 'zod';
import { CapabilityDescriptor } from './capability.records.js';
import { lazySchema } from './lazy-schema.js';

/** How rein reaches an MCP server: a child process over stdio, Streamable HTTP, or an in-process server of the host app. */
export const McpTransportKind = lazySchema(() => z.enum(['stdio', 'http', 'in-memory']));
export type McpTransportKind = z.infer<typeof McpTransportKind>;

/** The states of one server connection (machines/mcp-connection.machine.ts). */
export const McpConnectionState = lazySchema(() => z.enum(['connecting', 'ready', 'degraded', 'reconnecting', 'closed', 'failed']));
export type McpConnectionState = z.infer<typeof McpConnectionState>;

/** One tool a server advertised, as rein maps it: the catalog entry plus the server's title and description. */
export const McpToolInfo = lazySchema(() => CapabilityDescriptor.extend({
  server: z.string().min(1),
  tool: z.string().min(1),
  title: z.string().optional(),
  description: z.string().max(1024).optional(),
}));
export type McpToolInfo = z.infer<typeof McpToolInfo>;

/** A tool a server advertised that rein cannot use (a schema it cannot compile, a name it cannot map). */
export const McpToolProblem = lazySchema(() => z.object({ tool: z.string(), reason: z.string() }));
export type McpToolProblem = z.infer<typeof McpToolProblem>;

/** Where a server's configuration came from: a project file (trusted by its digest), the user's, or the host app. */
export const McpOrigin = lazySchema(() => z.object({
  kind: z.enum(['project', 'host']),
  /** Workspace-relative file (`.mcp.json`, `rein.config.json`) for a project server. */
  file: z.string().optional(),
  /** The digest of that file's `mcpServers` the user trusted. */
  digest: z.string().optional(),
}));
export type McpOrigin = z.infer<typeof McpOrigin>;

const server = lazySchema(() => z.string().min(1));

/**
 * input · rein is about to start (or restart) a server: what it runs or where it connects, with the names of the
 * environment variables and headers it passes — never their values. Appended (synced) before the process starts.
 */
export const McpStarted = lazySchema(() => z.object({
  server,
  transport: McpTransportKind,
  origin: McpOrigin,
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  /** The endpoint without credentials, query or fragment. */
  url: z.string().optional(),
  env: z.array(z.string()).optional(),
  headers: z.array(z.string()).optional(),
}));
export type McpStarted = z.infer<typeof McpStarted>;

/** input · the server answered the handshake: who it is, what it offers and its tools as rein maps them. */
export const McpConnected = lazySchema(() => z.object({
  server,
  serverInfo: z.object({ name: z.string(), version: z.string() }).optional(),
  protocolVersion: z.string().optional(),
  resources: z.boolean(),
  listChanged: z.boolean(),
  tools: z.array(McpToolInfo),
  problems: z.array(McpToolProblem),
}));
export type McpConnected = z.infer<typeof McpConnected>;

/** input · a new tool list from a ready server (after `notifications/tools/list_changed`). */
export const McpToolsListed = lazySchema(() => z.object({
  server,
  reason: z.enum(['list_changed', 'refresh']),
  tools: z.array(McpToolInfo),
  problems: z.array(McpToolProblem),
}));
export type McpToolsListed = z.infer<typeof McpToolsListed>;

/** input · the server is connected but misbehaving (its tool list could not be refreshed); its last tools stay. */
export const McpDegraded = lazySchema(() => z.object({ server, error: z.string() }));
export type McpDegraded = z.infer<typeof McpDegraded>;

/** input · the connection dropped and rein tries again (HTTP servers), after `delayMs`. */
export const McpReconnecting = lazySchema(() => z.object({ server, attempt: z.number().int().positive(), delayMs: z.number().int().nonnegative(), error: z.string() }));
export type McpReconnecting = z.infer<typeof McpReconnecting>;

/** input · the server could not be started or reached (`connect`), or its connection ended and will not be retried. */
export const McpFailed = lazySchema(() => z.object({ server, phase: z.enum(['connect', 'connection']), error: z.string() }));
export type McpFailed = z.infer<typeof McpFailed>;

/** input · rein closed the connection (the session stopped using it). */
export const McpClosed = lazySchema(() => z.object({ server, reason: z.string() }));
export type McpClosed = z.infer<typeof McpClosed>;
