import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import type { EventStore } from '../../stores/event-store.js';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein, type ReinOptions } from '../../src/rein.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';

/** A tool that does nothing, so a benchmark measures the harness and not the tool. */
export const noopTool = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: z.object({}).strict(),
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  execute: async () => ({ ok: true, output: 'ok' }),
});

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export const formatMs = (value: number): string => `${value.toFixed(3)} ms`;

/**
 * The fake model of every step benchmark (and of the peers bench): one no-op tool call per turn for `roundTrips`
 * turns, then an answer. `onTurn` is called before each model call with the number of round trips done so far.
 */
export const benchProvider = (roundTrips: number, onTurn?: (done: number) => void): ModelProvider => ({
  name: 'bench',
  model: 'bench',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    onTurn?.(request.turn - 1);
    const asking = request.turn <= roundTrips;
    yield { type: 'started', model: 'bench' };
    yield { type: 'text-delta', text: asking ? 'go' : 'done' };
    if (asking) yield { type: 'tool-intent', providerCallId: `c${request.turn}`, name: 'noop', arguments: {} };
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } };
    yield { type: 'finished', stopReason: asking ? 'tool_use' : 'end_turn' };
  },
});

export interface BenchSession {
  store: EventStore;
  sessionId: string;
  /** The store's directory (absent for the in-memory store). */
  storeDirectory?: string;
  /** Wall time between consecutive durable input records: the harness cost of one step (effects are no-ops). */
  stepTimes: number[];
  totalMs: number;
  cleanup: () => Promise<void>;
}

/** Run a scripted session of `roundTrips` model → noop-tool round trips on a LevelDB store (or in memory). */
export const runBenchSession = async (options: { roundTrips: number; durability: 'sync' | 'relaxed' | 'memory'; onTurn?: (done: number) => void; telemetry?: ReinOptions['telemetry']; instructions?: ReinOptions['instructions']; prepare?: (workspace: string) => Promise<void> }): Promise<BenchSession> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-'));
  await options.prepare?.(directory);
  const storeDirectory = join(directory, '.rein');
  // A key of its own: a benchmark never creates the machine's chain key in the user's configuration folder.
  const store = options.durability === 'memory' ? createMemoryEventStore() : await openLevelEventStore(storeDirectory, { durability: options.durability, chainKey: await randomChainKey() });
  const rein = await createRein({
    store,
    workspace: directory,
    provider: benchProvider(options.roundTrips, options.onTurn),
    tools: [noopTool],
    budgets: { maxTurns: options.roundTrips + 5, maxToolCalls: options.roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
  });
  const session = await rein.createSession({ task: 'bench' });
  const stepTimes: number[] = [];
  let last = performance.now();
  session.records$.subscribe((record) => {
    if (record.type !== 'model.responded' && record.type !== 'tool.settled') return;
    const now = performance.now();
    stepTimes.push(now - last);
    last = now;
  });
  const started = performance.now();
  last = started;
  await session.send('bench');
  const result = await session.whenQuiet();
  if (result.status !== 'completed') throw new Error(`bench session ended ${result.status}: ${result.reason ?? ''}`);
  return {
    store,
    sessionId: session.id,
    ...(options.durability === 'memory' ? {} : { storeDirectory: join(storeDirectory, 'streams', session.id) }),
    stepTimes,
    totalMs: performance.now() - started,
    cleanup: async () => {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
};

/** Bytes of the files under a directory (what the store directory holds after close). */
export const directoryBytes = async (path: string): Promise<number> => {
  let total = 0;
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    total += entry.isDirectory() ? await directoryBytes(full) : (await stat(full)).size;
  }
  return total;
};
