import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertRecordsMatchSchemas, createMemoryEventStore, verifyRecords } from 'rein/testing';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { isDerivedType, recordClassOf } from '../../models/records.js';
import type { AppendOptions, EventStore } from '../../stores/event-store.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/*
 * The host applies steps one after another but hands their batches to a writer that runs one store append at a time:
 * the steps applied while an append is being written go into the next append together. What must hold whatever the
 * store's speed: every effect starts only once the batch that requested it is written, seqs stay gap-free and in
 * order, and the log replays exactly.
 */

const count = 24;
const report = { status: 'completed', summary: 'looked', checked_paths: ['a.txt'], findings: [], recommendation: 'none' };

/** A store whose appends take a few milliseconds (so steps pile up behind them), counting appends and written seqs. */
const slowStore = (inner: EventStore) => {
  const stats = { appends: 0, written: 0, inFlight: 0, maxInFlight: 0 };
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'append') {
        return async (stream: string, records: readonly RecordDraft[], options: AppendOptions): Promise<RecordEnvelope[]> => {
          stats.appends++;
          stats.inFlight++;
          stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
          try {
            await new Promise((resolve) => setTimeout(resolve, 3));
            const stored = await target.append(stream, records, options);
            if (stored.length > 0) stats.written = stored[stored.length - 1]!.seq;
            return stored;
          } finally {
            stats.inFlight--;
          }
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, stats };
};

describe('pipelined writes', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir('rein-pipelined-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
  });
  afterEach(() => dir.remove());

  it('merges the steps applied during an append into the next one, and starts each effect only after its batch is written', async () => {
    const { store, stats } = slowStore(createMemoryEventStore());
    let sessionId = '';
    const early: string[] = [];
    const tasks = Array.from({ length: count }, (_, index) => ({ id: `t${index}`, role: 'explorer', objective: `look at part ${index}`, context_mode: 'clean' }));
    const reply = async function* (calls: Array<{ name: string; arguments: Record<string, unknown> }>): AsyncIterable<ModelEvent> {
      for (const [index, call] of calls.entries()) yield { type: 'tool-intent', providerCallId: `p${index}`, name: call.name, arguments: call.arguments };
      yield { type: 'usage', usage: { inputTokens: 5, outputTokens: 5 } };
      yield { type: 'finished', stopReason: calls.length > 0 ? 'tool_use' : 'end_turn' };
    };
    const provider: ModelProvider = {
      name: 'pipeline',
      model: 'pipeline',
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
        // The call's own request must already be written when the call starts.
        const requested = flattenRecords(await store.read(sessionId)).filter((record) => record.type === 'effect.requested' && record.actor === request.actor && (record.data as { kind: string }).kind === 'callModel');
        if (requested.length < request.turn || requested[request.turn - 1]!.seq > stats.written) early.push(`${request.actor} turn ${request.turn}`);
        yield { type: 'started', model: 'pipeline' };
        if (request.actor === 'root') yield* request.turn === 1 ? reply([{ name: 'delegate_task', arguments: { tasks, join: { policy: 'all' } } }]) : reply([]);
        else yield* reply([{ name: 'submit_report', arguments: report }]);
      },
    };
    // The children share the session's budgets: enough for each child's turn and report, and the root's two turns.
    const rein = await createRein({ store, workspace: dir.path, provider, delegation: { maxFanOut: count }, budgets: { maxTurns: count + 3, maxToolCalls: count + 1 } });
    const session = await rein.createSession({ task: 'pipeline' });
    sessionId = session.id;
    await session.send('split it');
    const result = await session.whenQuiet();
    await rein.close('done');
    expect(result.status).toBe('completed');
    expect(early).toEqual([]);
    expect(stats.maxInFlight).toBe(1);
    const records = await store.read(session.id);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    expect(result.head).toBe(records.length);
    const inputs = records.filter((record) => recordClassOf(record.type) === 'input').length;
    // Far fewer appends than steps: the children's steps were written together.
    expect(stats.appends).toBeLessThan(inputs / 2);
    const replay = verifyRecords(session.id, records);
    expect(replay.regenerated).toBe(records.filter((record) => isDerivedType(record.type)).length);
    assertRecordsMatchSchemas(records);
  });
});
