import { recordClassOf } from '../../models/records.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createMemoryEventStore, runScriptedSession } from 'rein/testing';
import { inspectRecords } from '../../src/inspect/inspect-session.js';
import { startInspectorRelay } from '../../src/inspect/inspector-relay.js';
import { connectInspector } from '../../src/inspect/stately-inspector.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { isSubsequence, seenByInspector, seenInLog, startReceiver } from '../support/inspector-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }, { name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'B' } }] },
    { text: 'Done.' },
  ],
};
const same = (left: { actor: string; event: string; to: unknown }, right: { actor: string; event: string; to: unknown }) => left.actor === right.actor && left.event === right.event && JSON.stringify(left.to) === JSON.stringify(right.to);

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-inspect-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
});
afterEach(() => workspace.remove());

describe('the Stately inspector stream', () => {
  it('a recorded session replayed to a local receiver shows the same actors and transitions as the log', async () => {
    const run = await runScriptedSession({ script, workspace: workspace.path, rein: { permissions: { mode: 'accept-edits' } } });
    expect(run.result.status).toBe('completed');
    const receiver = await startReceiver();
    try {
      const connection = await connectInspector(receiver.url);
      inspectRecords(run.session.id, run.records, connection.inspect);
      await connection.flush();
      await receiver.waitFor(connection.sent());
      await connection.close();
      const seen = seenByInspector(receiver.events);
      const logged = seenInLog(run.records);
      expect(receiver.events.length).toBe(connection.sent());
      expect(seen.actors).toEqual(logged.actors);
      expect(seen.transitions).toEqual(logged.transitions);
      expect(isSubsequence(logged.all, seen.steps, same)).toBe(true);
      const inputs = run.records.filter((record) => recordClassOf(record.type) === 'input' && record.type !== 'session.created').map((record) => record.type);
      // The root actor receives exactly the log's inputs (child actors — turns — get their own events in between).
      const names = new Map(receiver.events.filter((event) => event.type === '@xstate.actor').map((event) => [event.sessionId, event.name ?? event.sessionId]));
      const toRoot = receiver.events.filter((event) => event.type === '@xstate.event' && names.get(event.sessionId) === 'root').map((event) => event.event!.type);
      expect(toRoot.filter((type) => !type.startsWith('xstate.done.actor.') && type !== 'turn.results-ready')).toEqual(['xstate.init', ...inputs]);
      expect(seen.actors).toContain('root/turn-1');
    } finally {
      await receiver.close();
    }
  });

  it('a live session streams as it runs, and what arrives equals its log', async () => {
    const receiver = await startReceiver();
    try {
      const connection = await connectInspector(receiver.url);
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), inspect: connection.inspect });
      const session = await rein.startSession({ task: 'go' });
      await session.whenQuiet();
      await connection.flush();
      await receiver.waitFor(connection.sent());
      await connection.close();
      const records = await store.read(session.id);
      const seen = seenByInspector(receiver.events);
      expect(seen.actors).toEqual(seenInLog(records).actors);
      expect(seen.transitions).toEqual(seenInLog(records).transitions);
    } finally {
      await receiver.close();
    }
  });

  it('only dials this machine, and says so when nothing listens', async () => {
    await expect(connectInspector('ws://example.com:8080')).rejects.toMatchObject({ code: 'INSPECTOR_NOT_LOCAL' });
    await expect(connectInspector('wss://127.0.0.1:8080')).rejects.toMatchObject({ code: 'INSPECTOR_NOT_LOCAL' });
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    await expect(connectInspector(url, { timeoutMs: 2_000 })).rejects.toMatchObject({ code: 'INSPECTOR_UNREACHABLE' });
  });

  it('a relay on a port that is taken is a typed INSPECTOR_PORT_IN_USE, not a crash', async () => {
    const first = await startInspectorRelay({ port: 0 });
    try {
      await expect(startInspectorRelay({ port: first.port })).rejects.toMatchObject({ code: 'INSPECTOR_PORT_IN_USE', message: expect.stringContaining(`port ${first.port}`) });
    } finally {
      await first.close();
    }
  });

  it('the relay listens on 127.0.0.1, serves the bridge page and hands a late browser everything it relayed', async () => {
    const run = await runScriptedSession({ script, workspace: workspace.path });
    const relay = await startInspectorRelay({ port: 0 });
    try {
      const page = await (await fetch(relay.pageUrl)).text();
      expect(page).toContain(`ws://127.0.0.1:${relay.port}`);
      const connection = await connectInspector(relay.wsUrl);
      inspectRecords(run.session.id, run.records, connection.inspect);
      await connection.flush();
      for (let waited = 0; relay.relayed() < connection.sent() && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      await connection.close();
      const browser = new WebSocket(relay.wsUrl);
      const got: string[] = [];
      browser.on('message', (data) => got.push(data.toString()));
      for (let waited = 0; got.length < connection.sent() && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      browser.close();
      expect(got.length).toBe(connection.sent());
      expect(seenByInspector(got.map((message) => JSON.parse(message))).transitions).toEqual(seenInLog(run.records).transitions);
    } finally {
      await relay.close();
    }
  });
});
