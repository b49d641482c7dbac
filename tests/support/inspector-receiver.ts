import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { RecordEnvelope } from '../../models/envelope.js';
import { flattenRecords } from '../../src/host/step-record.js';

export interface ReceivedEvent {
  type: string;
  sessionId: string;
  name?: string;
  event?: { type: string };
  snapshot?: { value?: unknown };
}

/** A local WebSocket receiver standing in for the Stately inspector: it keeps every message it gets. */
export const startReceiver = async (): Promise<{ url: string; events: ReceivedEvent[]; waitFor: (count: number) => Promise<void>; waitUntil: (done: (events: readonly ReceivedEvent[]) => boolean) => Promise<void>; close: () => Promise<void> }> => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const events: ReceivedEvent[] = [];
  server.on('connection', (socket) => socket.on('message', (data) => events.push(JSON.parse(data.toString()) as ReceivedEvent)));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    waitFor: async (count) => {
      for (let waited = 0; events.length < count && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    waitUntil: async (done) => {
      for (let waited = 0; !done(events) && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

/** The actors and state-value transitions an inspector saw, per actor name. */
export const seenByInspector = (events: readonly ReceivedEvent[]) => {
  const names = new Map<string, string>();
  for (const event of events) if (event.type === '@xstate.actor') names.set(event.sessionId, event.name ?? event.sessionId);
  const last = new Map<string, string | null>();
  const transitions: Array<{ actor: string; event: string; to: unknown }> = [];
  const steps: Array<{ actor: string; event: string; to: unknown }> = [];
  for (const event of events) {
    if (event.type !== '@xstate.snapshot' || event.snapshot?.value === undefined) continue;
    const actor = names.get(event.sessionId) ?? event.sessionId;
    const value = JSON.stringify(event.snapshot.value);
    steps.push({ actor, event: event.event?.type ?? '', to: event.snapshot.value });
    if (last.get(actor) !== value) transitions.push({ actor, event: event.event?.type ?? '', to: event.snapshot.value });
    last.set(actor, value);
  }
  return { actors: [...new Set(names.values())].sort(), transitions, steps };
};

/** The same, from the log's `actor.transitioned` records. */
export const seenInLog = (records: readonly RecordEnvelope[]) => {
  const transitioned = flattenRecords(records).filter((record) => record.type === 'actor.transitioned').map((record) => record.data as { actor: string; event: string; from: unknown; to: unknown });
  return {
    actors: [...new Set(transitioned.map((entry) => entry.actor))].sort(),
    transitions: transitioned.filter((entry) => JSON.stringify(entry.from) !== JSON.stringify(entry.to)).map(({ actor, event, to }) => ({ actor, event, to })),
    all: transitioned.map(({ actor, event, to }) => ({ actor, event, to })),
  };
};

/** True when `needle` appears in `haystack` in order (not necessarily contiguous). */
export const isSubsequence = <T>(needle: readonly T[], haystack: readonly T[], equal: (left: T, right: T) => boolean): boolean => {
  let index = 0;
  for (const item of haystack) if (index < needle.length && equal(needle[index]!, item)) index++;
  return index === needle.length;
};
