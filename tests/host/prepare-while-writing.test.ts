import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore } from 'rein/testing';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { recordVersion } from '../../models/records.js';
import { SessionCreated } from '../../models/session.records.js';
import type { AppendOptions, EventStore } from '../../stores/event-store.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createCallModelExecutor, type ModelCallSource, type PreparedModelInput } from '../../src/effects/call-model.js';
import { SessionHost } from '../../src/host/session-host.js';
import { createSessionTree } from '../../src/host/session-tree.js';
import { machineVersion } from '../../src/host/machine-version.js';
import { rootPath } from '../../src/host/root-path.js';
import { createIdGenerator } from '../../src/host/record-ids.js';
import { stepDraftOf, type DerivedDraft } from '../../src/host/step-record.js';
import { runBenchSession } from '../../scripts/bench/bench-support.js';

/*
 * Pipelining (issue 26): while a step's batch is being written, the session's views fold it (`issued$`) and the
 * model call it asked for prepares its input — but the call itself starts only once the batch is written, and after
 * a failed write nothing prepared is used. Ordered by events against a store whose write the test holds open.
 */

/** A store whose append of the batch holding a `user.message` waits for the test to let it go (or fail it). */
const heldStore = (inner: EventStore) => {
  let release!: (outcome: Error | undefined) => void;
  const released = new Promise<Error | undefined>((resolve) => (release = resolve));
  let heldSignal!: () => void;
  const held = new Promise<void>((resolve) => (heldSignal = resolve));
  const stats = { written: 0 };
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'append') {
        return async (stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> => {
          if (records.some((record) => record.type === 'user.message')) {
            heldSignal();
            const failure = await released;
            if (failure) throw failure;
          }
          const stored = await target.append(stream, records, options);
          if (stored.length > 0) stats.written = stored[stored.length - 1]!.seq;
          return stored;
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, stats, held, release };
};

/** A host of a fresh session on `store`, with the real model-call executor over a source and a provider that log what they do. */
const hostOn = async (store: EventStore, template: SessionCreated) => {
  const events: string[] = [];
  const folded: RecordEnvelope[] = [];
  const stream = `s-prepare-${Math.random().toString(16).slice(2, 8)}`;
  const created: SessionCreated = { ...template, sessionId: stream };
  const source: ModelCallSource = {
    messages: () => [{ role: 'user', content: 'go' }],
    tools: () => [],
    role: () => undefined,
    async prepare(attempt): Promise<PreparedModelInput> {
      // What the views held when the input was built: the user message's step record must be among them.
      const last = folded[folded.length - 1];
      events.push(`prepared attempt ${attempt.attempt} through seq ${last?.seq ?? 0}`);
      return { messages: [{ role: 'user', content: `folded ${folded.length}` }], tools: [], facts: [] };
    },
  };
  const provider: ModelProvider = {
    name: 'held',
    model: 'held',
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      events.push(`called with ${request.messages.map((message) => message.content).join('|')}`);
      yield { type: 'started', model: 'held' };
      yield { type: 'text-delta', text: 'done' };
      yield { type: 'usage', usage: { inputTokens: 5, outputTokens: 5 } };
      yield { type: 'finished', stopReason: 'end_turn' };
    },
  };
  const newId = createIdGenerator();
  const at = Date.now();
  const { tree, drafts } = createSessionTree(created);
  const createdDraft: RecordDraft = { id: newId(), type: 'session.created', v: recordVersion('session.created'), at, actor: rootPath, data: created };
  const stored = await store.append(stream, [createdDraft, stepDraftOf(newId(), createdDraft, drafts as DerivedDraft[])], { expectedSeq: 0 });
  const host = new SessionHost({ store, stream, tree, head: stored[stored.length - 1]!.seq, createdAt: at, executors: { callModel: createCallModelExecutor({ provider, source }) }, machineVersion: machineVersion(), newId });
  host.issued$.subscribe((record) => folded.push(record));
  return { host, events, folded };
};

/** A `session.created` the session machine accepts (taken from a real session's log). */
const createdTemplate = async (): Promise<SessionCreated> => {
  const run = await runBenchSession({ roundTrips: 1, durability: 'memory' });
  try {
    const [created] = await run.store.read(run.sessionId);
    return SessionCreated.parse(created!.data);
  } finally {
    await run.cleanup();
  }
};

/** Let the event loop turn a few times (setImmediate: after every pending microtask and I/O callback). */
const turns = async (count: number): Promise<void> => {
  for (let index = 0; index < count; index++) await new Promise((resolve) => setImmediate(resolve));
};

describe('preparing an effect while its request is written', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  it('folds the batch and prepares the model call while the write is held, and calls the model only once it is written, with what was prepared', async () => {
    const template = await createdTemplate();
    const { store, stats, held, release } = heldStore(createMemoryEventStore());
    const { host, events, folded } = await hostOn(store, template);
    stop = async () => {
      release(undefined);
      await host.cancel('test over').catch(() => undefined);
    };
    const step = host.step({ type: 'user.message', data: { text: 'go' } });
    await held;
    await turns(5);
    const stepRecord = folded.find((record) => record.type === 'step.derived' && folded.some((input) => input.type === 'user.message' && input.id === record.cause));
    expect(stepRecord).toBeDefined();
    // The batch is not written yet: the views hold it, the input is prepared against them, the model is not called.
    expect(stats.written).toBeLessThan(stepRecord!.seq);
    expect(events).toEqual([`prepared attempt 1 through seq ${stepRecord!.seq}`]);
    release(undefined);
    await step;
    const result = await host.whenQuiet();
    expect(stats.written).toBeGreaterThanOrEqual(stepRecord!.seq);
    // Called once its request was written, with the input prepared while it was written (prepared once).
    expect(events[0]).toBe(`prepared attempt 1 through seq ${stepRecord!.seq}`);
    expect(events[1]).toMatch(/^called with folded \d+$/);
    expect(events.filter((event) => event.startsWith('prepared'))).toHaveLength(1);
    expect(result.status).toBe('completed');
  });

  it('drops what was prepared when the write fails: the model is never called and the session breaks', async () => {
    const template = await createdTemplate();
    const { store, held, release } = heldStore(createMemoryEventStore());
    const { host, events } = await hostOn(store, template);
    stop = async () => {
      release(undefined);
      await host.cancel('test over').catch(() => undefined);
    };
    const step = host.step({ type: 'user.message', data: { text: 'go' } });
    step.catch(() => undefined);
    await held;
    await turns(5);
    expect(events).toEqual([expect.stringMatching(/^prepared attempt 1 through seq \d+$/)]);
    release(new Error('the disk went away'));
    await expect(step).rejects.toThrow('the disk went away');
    await turns(10);
    await expect(host.whenQuiet()).rejects.toThrow('the disk went away');
    expect(events.filter((event) => event.startsWith('called'))).toEqual([]);
    expect(host.runningEffects()).toEqual([]);
  });
});
