import type { McpToolInfo, McpToolProblem } from '../../models/mcp.records.js';
import { mcpConnectionPath } from '../../machines/mcp-connection.machine.js';
import type { SessionMcpPort } from '../capabilities/session-capabilities.js';
import type { SandboxScope } from '../tools/command-launch.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { McpServerSpec } from './mcp-config.js';
import { McpRuntimeConnection, startedRecordOf } from './mcp-connection.js';
import { failureOfError } from './mcp-result.js';
import { mcpResourceTools, type McpResourceAccess } from './mcp-resource.tools.js';
import { mcpToolOf, type McpListedTool } from './mcp-tool.js';

type Step = (input: { type: string; actor?: string; data: Record<string, unknown> }) => Promise<unknown>;

interface ServerEntry {
  spec: McpServerSpec;
  path: string;
  connection: McpRuntimeConnection | undefined;
  tools: Set<string>;
  resources: boolean;
  reconnecting: boolean;
}

export interface SessionMcpOptions {
  servers: readonly McpServerSpec[];
  workspace: string;
  /** The environment `${VAR}` expands from (never passed to a stdio server as a whole). */
  env?: NodeJS.ProcessEnv;
  /** The session's sandbox, for a stdio server that says `"sandbox": true`. */
  sandbox?: SandboxScope;
  /** Reconnection attempts for an HTTP server whose connection dropped (default 3, backoff 1 s, 2 s, 4 s). */
  reconnectAttempts?: number;
  reconnectBaseMs?: number;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * A session's MCP servers: starts each one (recording `mcp.started` before anything runs), records what the world
 * says — `mcp.connected` with the mapped tools, `mcp.tools-listed` after `list_changed`, `mcp.degraded`,
 * `mcp.reconnecting` (HTTP servers, up to three attempts), `mcp.failed`, `mcp.closed` — as inputs to the server's
 * connection actor, and keeps the session's registry in step with the tools. A stdio server is never restarted
 * within a session (a crashed process is `failed`; resume starts it again). Closing records nothing.
 */
export class SessionMcp implements SessionMcpPort {
  readonly tools: readonly AnyToolDefinition[];
  private readonly entries = new Map<string, ServerEntry>();
  private startup: Promise<void> = Promise.resolve();
  private step: Step | undefined;
  private registry: ToolRegistry | undefined;
  private closed = false;

  constructor(private readonly options: SessionMcpOptions) {
    for (const spec of options.servers) this.entries.set(spec.name, { spec, path: mcpConnectionPath('root', spec.name), connection: undefined, tools: new Set(), resources: false, reconnecting: false });
    const access: McpResourceAccess = {
      servers: () => [...this.entries.values()].filter((entry) => entry.connection !== undefined && entry.resources).map((entry) => entry.spec.name),
      list: (server, signal) => this.connectionOf(server).listResources(signal),
      read: (server, uri, signal) => this.connectionOf(server).readResource(uri, signal),
      failure: (error, server) => {
        const failure = failureOfError(error, server);
        if (failure.code === 'Unavailable') this.dropped(server, failure.message);
        return failure;
      },
    };
    this.tools = mcpResourceTools(access);
  }

  configures(server: string): boolean {
    return this.entries.has(server);
  }

  start(step: Step, registry: ToolRegistry): void {
    this.step = step;
    this.registry = registry;
    this.startup = Promise.all([...this.entries.values()].map((entry) => this.startServer(entry))).then(() => undefined);
  }

  ready(): Promise<void> {
    return this.startup;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map(async (entry) => {
      const connection = entry.connection;
      entry.connection = undefined;
      await connection?.close();
    }));
  }

  private connectionOf(server: string): McpRuntimeConnection {
    const connection = this.entries.get(server)?.connection;
    if (!connection) throw Object.assign(new Error(`the MCP server ${server} is not connected`), { code: 'NOT_CONNECTED' });
    return connection;
  }

  private async record(type: string, entry: ServerEntry, data: Record<string, unknown>): Promise<void> {
    if (!this.step) return;
    await this.step({ type, actor: type === 'mcp.started' ? 'root' : entry.path, data: { server: entry.spec.name, ...data } }).catch(() => undefined);
  }

  private async startServer(entry: ServerEntry): Promise<void> {
    await this.record('mcp.started', entry, startedRecordOf(entry.spec, this.options.workspace) as unknown as Record<string, unknown>);
    if (this.closed) return;
    const outcome = await this.open(entry);
    if (outcome.ok) await this.record('mcp.connected', entry, outcome.data);
    else await this.record('mcp.failed', entry, { phase: 'connect', error: outcome.error });
  }

  /** Connect (a first time, or again) and map the tools; the registry follows the new list. */
  private async open(entry: ServerEntry): Promise<{ ok: true; data: Record<string, unknown> } | { ok: false; error: string }> {
    const connection = new McpRuntimeConnection(entry.spec, {
      workspace: this.options.workspace,
      env: this.options.env ?? process.env,
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
      events: {
        toolsChanged: (tools) => void this.toolsChanged(entry, connection, tools),
        toolsFailed: (error) => void this.record('mcp.degraded', entry, { error: `the tool list could not be refreshed: ${error}` }),
        closed: (error) => this.dropped(entry.spec.name, error, connection),
      },
    });
    try {
      const handshake = await connection.connect();
      if (this.closed) {
        await connection.close();
        return { ok: false, error: 'the session closed first' };
      }
      entry.connection = connection;
      entry.resources = handshake.resources;
      const { tools, problems } = this.mapTools(entry, handshake.tools);
      return { ok: true, data: { ...(handshake.serverInfo ? { serverInfo: handshake.serverInfo } : {}), ...(handshake.protocolVersion ? { protocolVersion: handshake.protocolVersion } : {}), resources: handshake.resources, listChanged: handshake.listChanged, tools, problems } };
    } catch (error) {
      return { ok: false, error: messageOf(error) };
    }
  }

  private mapTools(entry: ServerEntry, listed: readonly McpListedTool[]): { tools: McpToolInfo[]; problems: McpToolProblem[] } {
    const tools: McpToolInfo[] = [];
    const problems: McpToolProblem[] = [];
    const names = new Set<string>();
    const server = entry.spec.name;
    for (const tool of listed) {
      const mapped = mcpToolOf(tool, { server, call: (name, args, options) => this.connectionOf(server).call(name, args, options).catch((error: unknown) => this.afterFailure(server, error)) });
      if (!mapped.ok) {
        problems.push(mapped.problem);
        continue;
      }
      if (names.has(mapped.definition.name) || (this.registry?.get(mapped.definition.name) && !entry.tools.has(mapped.definition.name))) {
        problems.push({ tool: tool.name, reason: `its name ${mapped.definition.name} is taken` });
        continue;
      }
      names.add(mapped.definition.name);
      this.registry?.replace(mapped.definition);
      tools.push(mapped.info);
    }
    for (const name of entry.tools) if (!names.has(name)) this.registry?.unregister(name);
    entry.tools = names;
    return { tools, problems };
  }

  private async toolsChanged(entry: ServerEntry, connection: McpRuntimeConnection, listed: McpListedTool[]): Promise<void> {
    if (this.closed || entry.connection !== connection) return;
    const { tools, problems } = this.mapTools(entry, listed);
    await this.record('mcp.tools-listed', entry, { reason: 'list_changed', tools, problems });
  }

  /** A call failed: an HTTP server that cannot be reached is treated as a dropped connection. */
  private afterFailure(server: string, error: unknown): never {
    if (failureOfError(error, server).code === 'Unavailable') this.dropped(server, messageOf(error));
    throw error;
  }

  /**
   * The connection ended without rein closing it: a stdio server failed (its process is gone); an HTTP server is
   * reconnected with backoff, each attempt recorded, and fails after the last one.
   */
  private dropped(server: string, error: string, connection?: McpRuntimeConnection): void {
    const entry = this.entries.get(server);
    if (!entry || this.closed || entry.reconnecting) return;
    if (connection && entry.connection !== connection) return;
    const current = entry.connection;
    entry.connection = undefined;
    void current?.close();
    if (current === undefined && connection === undefined) return;
    if (entry.spec.config.type !== 'http' && entry.spec.config.type !== 'streamable-http' && entry.spec.config.type !== 'streamableHttp') {
      void this.record('mcp.failed', entry, { phase: 'connection', error });
      return;
    }
    entry.reconnecting = true;
    void this.reconnect(entry, error).finally(() => {
      entry.reconnecting = false;
    });
  }

  private async reconnect(entry: ServerEntry, firstError: string): Promise<void> {
    const attempts = this.options.reconnectAttempts ?? 3;
    const base = this.options.reconnectBaseMs ?? 1_000;
    let error = firstError;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const delayMs = base * 2 ** (attempt - 1);
      await this.record('mcp.reconnecting', entry, { attempt, delayMs, error });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (this.closed) return;
      const outcome = await this.open(entry);
      if (outcome.ok) {
        await this.record('mcp.connected', entry, outcome.data);
        return;
      }
      error = outcome.error;
    }
    await this.record('mcp.failed', entry, { phase: 'connection', error });
  }
}
