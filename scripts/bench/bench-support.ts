import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import type { EventStore } from '../../stores/event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
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

export interface BenchSession {
  store: EventStore;
  sessionId: string;
  /** Wall time between consecutive durable input records: the harness cost of one step (effects are no-ops). */
  stepTimes: number[];
  totalMs: number;
  cleanup: () => Promise<void>;
}

/** Run a scripted session of `roundTrips` model → noop-tool round trips on a LevelDB store (or in memory). */
export const runBenchSession = async (options: { roundTrips: number; durability: 'sync' | 'relaxed' | 'memory'; telemetry?: ReinOptions['telemetry'] }): Promise<BenchSession> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-'));
  const store = options.durability === 'memory' ? createMemoryEventStore() : await openLevelEventStore(join(directory, '.rein'), { durability: options.durability });
  const script = parseScript({ turns: [...Array.from({ length: options.roundTrips }, () => ({ text: 'go', toolCalls: [{ name: 'noop', arguments: {} }] })), { text: 'done' }] });
  const rein = await createRein({
    store,
    workspace: directory,
    provider: createScriptedProvider(script),
    tools: [noopTool],
    budgets: { maxTurns: options.roundTrips + 5, maxToolCalls: options.roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
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
    stepTimes,
    totalMs: performance.now() - started,
    cleanup: async () => {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
};
