import { join } from 'node:path';
import { queryObjects, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { compiledOf } from '../../src/host/compiled-machine.js';
import { interpretedOf } from '../../src/host/machine-stand-ins.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { makeTempDir } from '../support/temp-dir.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: z.object({}).strict(),
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  execute: async () => ({ ok: true, output: 'ok' }),
});

/*
 * Goal 4 of the performance work (docs/performance.md: *Performance*): what a session holds must not grow with its length beyond
 * the context window — views keep their windows, counters and indexes and read the rest from the store. A 5,000-step
 * session (2,500 model → tool round trips) on LevelDB: the heap after a forced GC at round trip 2,500 may exceed the
 * one at round trip 500 by at most 1 KB per step (a 4 MB allowance over the 4,000 steps between). Memory, not time: the
 * measurement does not depend on the load. The 20,000-step figure is `npm run bench`'s (scripts/bench/step.bench.ts);
 * a session four times as long measured the same 0.3–0.8 KB per step here, at four times the run time.
 */
describe('memory stays flat over a long session', () => {
  it('a 5,000-step session grows the heap by at most 1 KB per step', async () => {
    const workspace = await makeTempDir('rein-memory-flat-');
    const roundTrips = 2_500;
    const early = 500;
    const heaps = new Map<number, number>();
    const provider: ModelProvider = {
      name: 'flat',
      model: 'flat',
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
        const done = request.turn - 1;
        if (done === early || done === roundTrips) heaps.set(done, heapAfterGc());
        yield { type: 'started', model: 'flat' };
        yield { type: 'text-delta', text: request.turn <= roundTrips ? 'go' : 'done' };
        if (request.turn <= roundTrips) yield { type: 'tool-intent', providerCallId: `c${request.turn}`, name: 'noop', arguments: {} };
        yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } };
        yield { type: 'finished', stopReason: request.turn <= roundTrips ? 'tool_use' : 'end_turn' };
      },
    };
    const store = await openLevelEventStore(join(workspace.path, '.rein'), { durability: 'relaxed' });
    try {
      const rein = await createRein({ store, workspace: workspace.path, provider, tools: [noop], budgets: { maxTurns: roundTrips + 5, maxToolCalls: roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 } });
      const session = await rein.startSession({ task: 'a long session' });
      const result = await session.whenQuiet();
      expect(result.status).toBe('completed');
      expect(result.head).toBeGreaterThan(2 * roundTrips);
      const steps = 2 * (roundTrips - early);
      const growth = (heaps.get(roundTrips)! - heaps.get(early)!) / steps;
      expect(growth, `the heap grew ${growth.toFixed(0)} B per step`).toBeLessThanOrEqual(1024);
    } finally {
      await store.close();
      await workspace.remove();
    }
  }, 600_000);
});

/*
 * What a step leaves in process-wide places a heap allowance would miss: the compiled session machine's transition
 * cache once kept every `xstate.done.actor.root/turn-N` (one entry per turn of every session a worker ever ran), and
 * the wall-time timer armed per effect left, once cleared, Node's list for its duration behind (two per round trip).
 */
describe('a step leaves nothing behind in process-wide caches', () => {
  it('the transition cache and the timer lists do not grow with the turns', async () => {
    const probe = setTimeout(() => undefined, 987_654);
    const TimersList = (probe as unknown as { _idlePrev: { constructor: new () => unknown } })._idlePrev.constructor;
    clearTimeout(probe);
    const roundTrips = 200;
    const samples = new Map<number, { timerLists: number; eventTypes: number }>();
    const sample = (done: number) => samples.set(done, { timerLists: queryObjects(TimersList, { format: 'count' }), eventTypes: compiledOf(interpretedOf(sessionMachine))!.cachedEventTypes });
    const provider: ModelProvider = {
      name: 'flat',
      model: 'flat',
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
        const done = request.turn - 1;
        if (done === 20 || done === roundTrips) sample(done);
        yield { type: 'started', model: 'flat' };
        yield { type: 'text-delta', text: request.turn <= roundTrips ? 'go' : 'done' };
        if (request.turn <= roundTrips) yield { type: 'tool-intent', providerCallId: `c${request.turn}`, name: 'noop', arguments: {} };
        yield { type: 'finished', stopReason: request.turn <= roundTrips ? 'tool_use' : 'end_turn' };
      },
    };
    const workspace = await makeTempDir('rein-step-caches-');
    try {
      const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, tools: [noop], budgets: { maxTurns: roundTrips + 5, maxToolCalls: roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 } });
      const session = await rein.startSession({ task: 'caches' });
      expect((await session.whenQuiet()).status).toBe('completed');
      expect(samples.get(roundTrips)!.eventTypes).toBe(samples.get(20)!.eventTypes);
      // A little slack for lists other timers (not one per step) come and go with.
      expect(samples.get(roundTrips)!.timerLists).toBeLessThanOrEqual(samples.get(20)!.timerLists + 3);
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
