import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { checkMachine } from 'rein/testing';
import { mcpConnectionMachine, offeredTools, type McpConnectionEvent } from '../../machines/mcp-connection.machine.js';
import type { McpToolInfo } from '../../models/mcp.records.js';

type Snapshot = SnapshotFrom<typeof mcpConnectionMachine>;

const server = 'github';
const tool = (name: string): McpToolInfo => ({ name: `mcp__github__${name}`, tool: name, server, source: 'mcp', readOnly: true, destructive: false, openWorld: true, risk: 'read', tokens: 10, schemaDigest: `b3:${name}` });
const input = { path: 'root/mcp/github', server, transport: 'http' as const };

/**
 * What the runtime can report about a server — for this server and for another one — including out-of-order facts.
 * Restarts and reconnection attempts are bounded so the state space is finite.
 */
const events = (snapshot: Snapshot): McpConnectionEvent[] => [
  ...(snapshot.context.starts < 2 ? [{ type: 'mcp.started' as const, server, transport: 'http' as const, origin: { kind: 'host' as const } }] : []),
  { type: 'mcp.connected', server, resources: false, listChanged: true, tools: [tool('search_issues')], problems: [] },
  { type: 'mcp.tools-listed', server, reason: 'list_changed', tools: [tool('search_issues'), tool('get_pull_request')], problems: [] },
  { type: 'mcp.degraded', server, error: 'tools/list timed out' },
  ...(snapshot.context.attempts < 3 ? [{ type: 'mcp.reconnecting' as const, server, attempt: snapshot.context.attempts + 1, delayMs: 1000, error: 'connection reset' }] : []),
  { type: 'mcp.reconnecting', server, attempt: snapshot.context.attempts + 5, delayMs: 1000, error: 'skipped ahead' },
  { type: 'mcp.failed', server, phase: 'connection', error: 'gone' },
  { type: 'mcp.closed', server, reason: 'session ended' },
  { type: 'mcp.connected', server: 'other', resources: false, listChanged: false, tools: [tool('x')], problems: [] },
  { type: 'mcp.failed', server: 'other', phase: 'connect', error: 'not mine' },
];

const offered = (snapshot: Snapshot) => offeredTools({ value: snapshot.value, context: snapshot.context });

describe('mcp-connection.machine model check', () => {
  const result = checkMachine({
    machine: mcpConnectionMachine,
    input,
    events,
    stateInvariants: {
      'tools are offered only while ready or degraded': (snapshot) => offered(snapshot).length === 0 || snapshot.matches('ready') || snapshot.matches('degraded'),
      'a connecting server offers nothing and has no tools yet': (snapshot) => !snapshot.matches('connecting') || snapshot.context.tools.length === 0,
      'a failed server says why': (snapshot) => !snapshot.matches('failed') || typeof snapshot.context.lastError === 'string',
      'a degraded server says why': (snapshot) => !snapshot.matches('degraded') || typeof snapshot.context.lastError === 'string',
      'ready means no pending error and no reconnection in progress': (snapshot) => !snapshot.matches('ready') || (snapshot.context.lastError === null && snapshot.context.attempts === 0) || snapshot.context.attempts === 0,
      'reconnecting counts its attempts from 1': (snapshot) => !snapshot.matches('reconnecting') || snapshot.context.attempts >= 1,
    },
    transitionInvariants: {
      'another server\'s facts change nothing': ({ from, to, event }) => event.server === server || (JSON.stringify(from.value) === JSON.stringify(to.value) && from.context === to.context),
      'attempts only count up by one, and a skipped attempt changes nothing': ({ from, to, event }) =>
        event.type !== 'mcp.reconnecting' || (event.attempt === from.context.attempts + 1 ? !to.matches('reconnecting') || to.context.attempts === event.attempt : from.context === to.context),
      'a tool list is only taken from a connected server': ({ from, to, event }) => event.type !== 'mcp.tools-listed' || from.matches('ready') || from.matches('degraded') || from.context.tools === to.context.tools,
    },
  });

  it('holds every invariant on every reachable state and edge', () => {
    expect(result.violations).toEqual([]);
  });

  it('reaches every state', () => {
    expect(result.stateValues).toEqual(['"closed"', '"connecting"', '"degraded"', '"failed"', '"ready"', '"reconnecting"'].sort());
  });

  it('a restart (resume) connects again from closed or failed, with no tools until the server answers', () => {
    const steps: McpConnectionEvent[] = [{ type: 'mcp.connected', server, resources: true, listChanged: false, tools: [tool('a')], problems: [] }, { type: 'mcp.failed', server, phase: 'connection', error: 'exited' }, { type: 'mcp.started', server, transport: 'http', origin: { kind: 'host' } }];
    const actor = createActor(mcpConnectionMachine, { input }).start();
    for (const event of steps) actor.send(event);
    expect(actor.getSnapshot().value).toBe('connecting');
    expect(actor.getSnapshot().context).toMatchObject({ tools: [], starts: 2, lastError: null });
  });
});
