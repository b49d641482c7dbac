import { assign, setup, type SnapshotFrom } from 'xstate';
import type { McpClosed, McpConnected, McpDegraded, McpFailed, McpReconnecting, McpStarted, McpToolInfo, McpToolsListed, McpTransportKind } from '../models/mcp.records.js';
import { lazyValue } from '../models/lazy-schema.js';

export interface McpConnectionInput {
  /** The actor path: `<agent path>/mcp/<server>`. */
  path: string;
  server: string;
  transport: McpTransportKind;
}

export interface McpConnectionContext {
  path: string;
  server: string;
  transport: McpTransportKind;
  /** The tools the server advertised last (as rein maps them); offered to the model only while ready or degraded. */
  tools: McpToolInfo[];
  resources: boolean;
  /** Reconnection attempts since the connection last dropped. */
  attempts: number;
  lastError: string | null;
  /** How often the server was started in this session (a resume starts it again). */
  starts: number;
}

/** The connection's events are input records: what the runtime saw the server do. */
export type McpConnectionEvent =
  | ({ type: 'mcp.started' } & McpStarted)
  | ({ type: 'mcp.connected' } & McpConnected)
  | ({ type: 'mcp.tools-listed' } & McpToolsListed)
  | ({ type: 'mcp.degraded' } & McpDegraded)
  | ({ type: 'mcp.reconnecting' } & McpReconnecting)
  | ({ type: 'mcp.failed' } & McpFailed)
  | ({ type: 'mcp.closed' } & McpClosed);

const forThisServer = ({ context, event }: { context: McpConnectionContext; event: McpConnectionEvent }) => event.server === context.server;

/**
 * One MCP server connection of a session (connecting → ready → degraded / reconnecting → closed / failed). Pure: the
 * runtime connects, lists tools and watches the transport, and tells the machine what happened through input
 * records; the machine keeps the server's advertised tools and decides which facts are consistent (a tool list only
 * from a connected server, reconnection attempts counting up). The visible set offers the tools only while the
 * connection is `ready` or `degraded`. Closed and failed connections start again on `mcp.started` (a resume).
 */
export const mcpConnectionMachine = lazyValue(() => setup({
  types: {
    context: {} as McpConnectionContext,
    events: {} as McpConnectionEvent,
    input: {} as McpConnectionInput,
  },
  actions: {
    restart: assign(({ context }) => ({ tools: [], resources: false, attempts: 0, lastError: null, starts: context.starts + 1 })),
    takeTools: assign(({ event }) => (event.type === 'mcp.connected' ? { tools: event.tools, resources: event.resources, attempts: 0, lastError: null } : event.type === 'mcp.tools-listed' ? { tools: event.tools, lastError: null } : {})),
    noteError: assign(({ event }) => (event.type === 'mcp.degraded' || event.type === 'mcp.failed' || event.type === 'mcp.reconnecting' ? { lastError: event.error } : event.type === 'mcp.closed' ? { lastError: null } : {})),
    countAttempt: assign(({ event }) => (event.type === 'mcp.reconnecting' ? { attempts: event.attempt } : {})),
  },
  guards: {
    isThisServer: forThisServer,
    isNextAttempt: ({ context, event }) => forThisServer({ context, event }) && event.type === 'mcp.reconnecting' && event.attempt === context.attempts + 1,
  },
}).createMachine({
  id: 'mcpConnection',
  context: ({ input }) => ({ path: input.path, server: input.server, transport: input.transport, tools: [], resources: false, attempts: 0, lastError: null, starts: 1 }),
  initial: 'connecting',
  on: {
    'mcp.started': { guard: 'isThisServer', target: '.connecting', actions: 'restart' },
  },
  states: {
    connecting: {
      on: {
        'mcp.connected': { guard: 'isThisServer', target: 'ready', actions: 'takeTools' },
        'mcp.failed': { guard: 'isThisServer', target: 'failed', actions: 'noteError' },
        'mcp.closed': { guard: 'isThisServer', target: 'closed', actions: 'noteError' },
      },
    },
    ready: {
      on: {
        'mcp.tools-listed': { guard: 'isThisServer', target: 'ready', actions: 'takeTools' },
        'mcp.degraded': { guard: 'isThisServer', target: 'degraded', actions: 'noteError' },
        'mcp.reconnecting': { guard: 'isNextAttempt', target: 'reconnecting', actions: ['countAttempt', 'noteError'] },
        'mcp.failed': { guard: 'isThisServer', target: 'failed', actions: 'noteError' },
        'mcp.closed': { guard: 'isThisServer', target: 'closed', actions: 'noteError' },
      },
    },
    degraded: {
      description: 'Connected but misbehaving (its tool list could not be refreshed): its last tools stay offered.',
      on: {
        'mcp.tools-listed': { guard: 'isThisServer', target: 'ready', actions: 'takeTools' },
        'mcp.degraded': { guard: 'isThisServer', target: 'degraded', actions: 'noteError' },
        'mcp.reconnecting': { guard: 'isNextAttempt', target: 'reconnecting', actions: ['countAttempt', 'noteError'] },
        'mcp.failed': { guard: 'isThisServer', target: 'failed', actions: 'noteError' },
        'mcp.closed': { guard: 'isThisServer', target: 'closed', actions: 'noteError' },
      },
    },
    reconnecting: {
      description: 'The connection dropped; the runtime tries again. Its tools are not offered meanwhile.',
      on: {
        'mcp.connected': { guard: 'isThisServer', target: 'ready', actions: 'takeTools' },
        'mcp.reconnecting': { guard: 'isNextAttempt', target: 'reconnecting', actions: ['countAttempt', 'noteError'] },
        'mcp.failed': { guard: 'isThisServer', target: 'failed', actions: 'noteError' },
        'mcp.closed': { guard: 'isThisServer', target: 'closed', actions: 'noteError' },
      },
    },
    closed: {},
    failed: {},
  },
}));

export type McpConnectionMachine = typeof mcpConnectionMachine;
export type McpConnectionSnapshot = SnapshotFrom<McpConnectionMachine>;

/** The tools a connection offers right now: its last advertised list while ready or degraded, else none. */
export const offeredTools = (snapshot: { value: unknown; context: McpConnectionContext }): readonly McpToolInfo[] =>
  snapshot.value === 'ready' || snapshot.value === 'degraded' ? snapshot.context.tools : [];

/** The actor path of a server's connection under an agent (`root/mcp/github`). */
export const mcpConnectionPath = (agentPath: string, server: string): string => `${agentPath}/mcp/${server}`;
