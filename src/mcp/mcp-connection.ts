import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { McpStarted } from '../../models/mcp.records.js';
import { displayEndpoint } from '../providers/wire-format.js';
import { expandRecord, expandVariables, variablesIn, type McpInMemoryConfig, type McpServerEntry, type McpServerSpec } from './mcp-config.js';
import type { McpCallResult } from './mcp-result.js';
import type { McpListedTool } from './mcp-tool.js';
import { groupedCommand, ProcessGroupReaper } from './stdio-process.js';
import { sandboxedProgram, type SandboxScope } from '../tools/command-launch.js';

/** What the handshake and the first tool list told rein. */
export interface McpHandshake {
  serverInfo?: { name: string; version: string };
  protocolVersion?: string;
  resources: boolean;
  listChanged: boolean;
  tools: McpListedTool[];
}

/** What a running connection reports (unexpected ends and tool list changes); never called after `close`. */
export interface McpConnectionEvents {
  toolsChanged(tools: McpListedTool[]): void;
  toolsFailed(error: string): void;
  closed(error: string): void;
}

/** Defaults: a call gets 60 s without an answer (progress resets it), a connection 30 s to come up. */
export const defaultCallTimeoutMs = 60_000;
export const defaultConnectTimeoutMs = 30_000;
/** Longest a single call may run even while it reports progress. */
const maxCallMs = 30 * 60_000;

type SdkClient = import('@modelcontextprotocol/client').Client;
type SdkTransport = import('@modelcontextprotocol/client').Transport;

const isInMemory = (config: McpServerEntry | McpInMemoryConfig): config is McpInMemoryConfig => config.type === 'in-memory';
const isHttp = (config: McpServerEntry | McpInMemoryConfig): config is Extract<McpServerEntry, { url: string }> => 'url' in config;

/** The `mcp.started` record of a server: what it runs or where it connects, with variable and header names only. */
export const startedRecordOf = (spec: McpServerSpec, workspace: string): McpStarted => {
  const { config } = spec;
  if (isInMemory(config)) return { server: spec.name, transport: 'in-memory', origin: spec.origin };
  if (isHttp(config)) {
    const headers = Object.keys(config.headers ?? {});
    const variables = [...new Set([config.url, ...Object.values(config.headers ?? {})].flatMap(variablesIn))];
    return { server: spec.name, transport: 'http', origin: spec.origin, url: displayEndpoint(config.url.replace(/\$\{[^}]*\}/g, 'x')), ...(headers.length > 0 ? { headers } : {}), ...(variables.length > 0 ? { env: variables } : {}) };
  }
  const env = [...new Set([...Object.keys(config.env ?? {}), ...[config.command, ...(config.args ?? []), ...Object.values(config.env ?? {})].flatMap(variablesIn)])];
  return { server: spec.name, transport: 'stdio', origin: spec.origin, command: config.command, ...(config.args && config.args.length > 0 ? { args: [...config.args] } : {}), cwd: resolve(workspace, config.cwd ?? '.'), ...(env.length > 0 ? { env } : {}) };
};

/** The end of a server's stderr, kept for error messages. */
class StderrTail {
  private text = '';
  attach(stream: Readable | null | undefined): void {
    stream?.on('data', (chunk: Buffer) => {
      this.text = (this.text + chunk.toString('utf8')).slice(-2_000);
    });
    stream?.on('error', () => undefined);
  }
  toString(): string {
    const lines = this.text.trim().split('\n').slice(-3).join(' | ');
    return lines ? ` (stderr: ${lines.slice(-400)})` : '';
  }
}

/**
 * One live connection to one MCP server through the official SDK: a stdio child process (in its own process group,
 * killed with rein however rein ends; the SDK's default environment plus the configured `env`, never rein's own
 * variables such as provider keys), Streamable HTTP (headers with `${VAR}` expanded), or an in-process server over the
 * SDK's in-memory transport. It connects, lists tools (and follows `list_changed`), calls tools with progress and
 * timeouts, lists and reads resources, and reports an unexpected end once.
 */
export class McpRuntimeConnection {
  private client: SdkClient | undefined;
  private transport: SdkTransport | undefined;
  private reaper: ProcessGroupReaper | undefined;
  private readonly stderr = new StderrTail();
  private closing = false;
  private ended = false;

  constructor(
    readonly spec: McpServerSpec,
    private readonly options: { workspace: string; env: NodeJS.ProcessEnv; events: McpConnectionEvents; sandbox?: SandboxScope },
  ) {}

  get transportKind(): 'stdio' | 'http' | 'in-memory' {
    return isInMemory(this.spec.config) ? 'in-memory' : isHttp(this.spec.config) ? 'http' : 'stdio';
  }

  get callTimeoutMs(): number {
    return this.spec.config.timeout ?? defaultCallTimeoutMs;
  }

  /** Start (or reach) the server, shake hands and list its tools, within the connect timeout. Rejects with why not. */
  async connect(): Promise<McpHandshake> {
    const sdk = await import('@modelcontextprotocol/client');
    const timeout = this.spec.config.connectTimeout ?? defaultConnectTimeoutMs;
    const client = new sdk.Client(
      { name: 'rein', version: '0.1.0' },
      {
        capabilities: {},
        listChanged: {
          tools: {
            autoRefresh: true,
            debounceMs: 50,
            onChanged: (error, tools) => {
              if (this.closing || this.ended) return;
              if (error) this.options.events.toolsFailed(error.message);
              else this.options.events.toolsChanged((tools ?? []) as McpListedTool[]);
            },
          },
        },
      },
    );
    const transport = await this.transportOf(sdk);
    this.client = client;
    this.transport = transport;
    client.onclose = () => this.onClosed();
    // A transport error while calls wait (an HTTP server gone mid-call: its response stream reset) settles them
    // `Unavailable` at once instead of leaving them to their timeout; other errors are the reconnect logic's.
    client.onerror = (error) => this.failPending(error);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeout} ms`)), timeout);
    try {
      await client.connect(transport, { timeout, signal: controller.signal });
      const pid = (transport as { pid?: number | null }).pid;
      if (this.transportKind === 'stdio' && typeof pid === 'number' && this.grouped) this.reaper = new ProcessGroupReaper(pid);
      const capabilities = client.getServerCapabilities() ?? {};
      const listed = capabilities.tools ? await client.listTools(undefined, { timeout, signal: controller.signal }) : { tools: [] };
      const info = client.getServerVersion();
      return {
        ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}),
        ...(client.getNegotiatedProtocolVersion() ? { protocolVersion: client.getNegotiatedProtocolVersion()! } : {}),
        resources: Boolean(capabilities.resources),
        listChanged: Boolean((capabilities.tools as { listChanged?: boolean } | undefined)?.listChanged),
        tools: listed.tools as McpListedTool[],
      };
    } catch (error) {
      await this.close();
      throw new Error(`${messageOf(error)}${this.stderr.toString()}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Rejecters of the calls waiting for an answer now. */
  private readonly pending = new Set<(error: Error) => void>();

  private failPending(error: Error): void {
    if (this.transportKind === 'stdio' || this.pending.size === 0) return;
    const dropped = Object.assign(new Error(`the connection dropped during the call: ${error.message}`), { code: 'CONNECTION_CLOSED' });
    for (const reject of [...this.pending]) reject(dropped);
  }

  /** Call a tool; rejects with the SDK's error (the tool maps it to a failure class). */
  async call(tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; onProgress(message: string): void }): Promise<McpCallResult> {
    const client = this.client;
    if (!client || this.ended) throw Object.assign(new Error('the server is not connected'), { code: 'NOT_CONNECTED' });
    let reject!: (error: Error) => void;
    const dropped = new Promise<never>((_, fail) => (reject = fail));
    this.pending.add(reject);
    try {
      const answer = this.callOnce(client, tool, args, options);
      // When the drop wins the race, the SDK's own rejection of this call (at its timeout) must not go unhandled.
      answer.catch(() => undefined);
      return await Promise.race([answer, dropped]);
    } finally {
      this.pending.delete(reject);
    }
  }

  private async callOnce(client: SdkClient, tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; onProgress(message: string): void }): Promise<McpCallResult> {
    const result = await client.callTool(
      { name: tool, arguments: args },
      {
        signal: options.signal,
        timeout: this.callTimeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: maxCallMs,
        onprogress: (progress) => options.onProgress(`${progress.progress}${progress.total === undefined ? '' : `/${progress.total}`}${progress.message ? ` ${progress.message}` : ''}`),
      },
    );
    return result as McpCallResult;
  }

  /** The server's resources (every page). */
  async listResources(signal: AbortSignal): Promise<Array<{ uri: string; name: string; title?: string; description?: string; mimeType?: string }>> {
    if (!this.client || this.ended) throw Object.assign(new Error('the server is not connected'), { code: 'NOT_CONNECTED' });
    const listed = await this.client.listResources(undefined, { signal, timeout: this.callTimeoutMs, cacheMode: 'bypass' });
    return listed.resources as Array<{ uri: string; name: string; title?: string; description?: string; mimeType?: string }>;
  }

  /** Read one resource. */
  async readResource(uri: string, signal: AbortSignal): Promise<Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>> {
    if (!this.client || this.ended) throw Object.assign(new Error('the server is not connected'), { code: 'NOT_CONNECTED' });
    const read = await this.client.readResource({ uri }, { signal, timeout: this.callTimeoutMs, cacheMode: 'bypass' });
    return read.contents as Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>;
  }

  /** Close the connection and (stdio) kill the server's process group. Idempotent; reports nothing. */
  async close(): Promise<void> {
    this.closing = true;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    if (!client) await this.transport?.close().catch(() => undefined);
    this.transport = undefined;
    await this.reaper?.kill();
    this.reaper = undefined;
  }

  private grouped = false;

  private async transportOf(sdk: typeof import('@modelcontextprotocol/client')): Promise<SdkTransport> {
    const { config } = this.spec;
    const env = this.options.env;
    if (isInMemory(config)) {
      const [clientSide, serverSide] = sdk.InMemoryTransport.createLinkedPair();
      await config.connect(serverSide);
      return clientSide;
    }
    if (isHttp(config)) {
      const url = expandVariables(config.url, env);
      if (!url.ok) throw new Error(`the environment variable ${url.missing} is not set (used in the URL)`);
      const headers = expandRecord(config.headers, env);
      if (!headers.ok) throw new Error(`the environment variable ${headers.missing} is not set (used in a header)`);
      return new sdk.StreamableHTTPClientTransport(new URL(url.value), { requestInit: { headers: headers.value } });
    }
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    const command = expandVariables(config.command, env);
    if (!command.ok) throw new Error(`the environment variable ${command.missing} is not set (used in the command)`);
    const args: string[] = [];
    for (const arg of config.args ?? []) {
      const expanded = expandVariables(arg, env);
      if (!expanded.ok) throw new Error(`the environment variable ${expanded.missing} is not set (used in the arguments)`);
      args.push(expanded.value);
    }
    const serverEnv = expandRecord(config.env, env);
    if (!serverEnv.ok) throw new Error(`the environment variable ${serverEnv.missing} is not set (used in env)`);
    const cwd = resolve(this.options.workspace, config.cwd ?? '.');
    let argv = [command.value, ...args];
    if (config.sandbox === true) {
      if (this.options.sandbox === undefined) throw new Error('it asks for the sandbox ("sandbox": true), and this session has none to run it in');
      const wrapped = await sandboxedProgram(this.options.sandbox, { argv, cwd });
      if ('refused' in wrapped) throw new Error(`${wrapped.refused}; set "sandbox": false to run it on the host`);
      argv = wrapped.argv;
    }
    const launch = groupedCommand(argv[0]!, argv.slice(1));
    this.grouped = launch.grouped;
    // The SDK adds its default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) and nothing else of rein's.
    const transport = new StdioClientTransport({ command: launch.command, args: launch.args, env: serverEnv.value, cwd, stderr: 'pipe' });
    this.stderr.attach(transport.stderr as Readable | null);
    return transport;
  }

  private onClosed(): void {
    if (this.closing || this.ended) return;
    this.ended = true;
    const kind = this.transportKind;
    void this.close().finally(() => this.options.events.closed(kind === 'stdio' ? `the server process exited${this.stderr.toString()}` : 'the connection closed'));
  }
}

const messageOf = (error: unknown): string => {
  const value = error as { message?: unknown; code?: unknown };
  const message = typeof value?.message === 'string' ? value.message : String(error);
  if (value?.code === 'ENOENT' || /ENOENT/.test(message)) return `the command was not found: ${message}`;
  // An HTTP server that cannot be reached: `fetch failed` says nothing; the cause (`ECONNREFUSED 127.0.0.1:4000`) does.
  const cause = systemCauseOf(error);
  return cause && !message.includes(cause) ? `${message} (${cause})` : message;
};

/** The system error under an error's `cause` chain, as `CODE host:port` (`ECONNREFUSED 127.0.0.1:4000`, `ENOTFOUND db`). */
const systemCauseOf = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 6; depth++) {
    const value = current as { code?: unknown; address?: unknown; port?: unknown; hostname?: unknown; errors?: unknown; cause?: unknown };
    if (typeof value.code === 'string' && /^E[A-Z]+$/.test(value.code)) {
      const host = typeof value.address === 'string' ? value.address : typeof value.hostname === 'string' ? value.hostname : undefined;
      return `${value.code}${host ? ` ${host}${typeof value.port === 'number' ? `:${value.port}` : ''}` : ''}`;
    }
    // Node's fetch reports a refused connection to every address it tried as an AggregateError.
    current = Array.isArray(value.errors) && value.errors.length > 0 ? value.errors[0] : value.cause;
  }
  return undefined;
};
