import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, from } from 'rxjs';
import * as z from 'zod';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { projectModelInput } from '../../src/projections/context-policy.js';
import { contextProjection } from '../../src/projections/context.view.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { liveView, rebuildView, reducerOf, type Projection, type ViewState } from '../../src/projections/projection.js';
import { tokenCounterFor, type TokenCounter } from '../../src/projections/token-counter.js';
import { traceProjection } from '../../src/projections/trace.view.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { formatMs, median } from './bench-support.js';

/** A tool that answers with a 40-line listing, so observations look like a real read. */
const listingTool = defineTool({
  name: 'inspect_file',
  description: 'Returns a 40-line listing.',
  parameters: z.object({ index: z.number() }).strict(),
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  execute: async ({ index }) => ({ ok: true, output: Array.from({ length: 40 }, (_, line) => `${line + 1} ${index.toString(16).padStart(8, '0')} | const value${line} = compute(${index}, ${line}); // step ${index}`).join('\n') }),
});

/** Run a real scripted session of `roundTrips` model → tool round trips on the in-memory store; return its records. */
const recordSession = async (roundTrips: number, tools = [listingTool]): Promise<{ records: RecordEnvelope[]; cleanup: () => Promise<void> }> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-projection-'));
  const store = createMemoryEventStore();
  const script = parseScript({ turns: [...Array.from({ length: roundTrips }, (_, index) => ({ text: `step ${index}`, toolCalls: [{ name: tools[0]!.name, arguments: { index } }] })), { text: 'done' }] });
  const rein = await createRein({ store, workspace: directory, provider: createScriptedProvider(script), tools: [...builtinTools(), ...tools], budgets: { maxTurns: roundTrips + 5, maxToolCalls: roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 } });
  const session = await rein.startSession({ task: 'bench the projections. Never touch dist/.' });
  const result = await session.whenQuiet();
  if (result.status !== 'completed') throw new Error(`bench session ended ${result.status}: ${result.reason ?? ''}`);
  const records = await store.read(session.id);
  return { records, cleanup: async () => { await store.close(); await rm(directory, { recursive: true, force: true }); } };
};

const time = (work: () => unknown): number => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

/** Throughput of each view's reducer over the same records, against an identity `reduce`, interleaved over rounds. */
const throughput = async (records: readonly RecordEnvelope[]): Promise<void> => {
  const views: Array<[string, Projection<ViewState>]> = [
    ['context', contextProjection() as Projection<ViewState>],
    ['trace', traceProjection as Projection<ViewState>],
    ['memory', memoryProjection as Projection<ViewState>],
  ];
  const identity = (view: ViewState, _record: RecordEnvelope): ViewState => view;
  const timings = new Map<string, number[]>([['identity', []], ...views.map(([name]) => [name, []] as [string, number[]])]);
  for (let round = 0; round < 5; round++) {
    timings.get('identity')!.push(time(() => records.reduce(identity, { seq: 0 })));
    for (const [name, projection] of views) timings.get(name)!.push(time(() => records.reduce(reducerOf(projection), projection.initial())));
  }
  const live: number[] = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    await lastValueFrom(liveView(contextProjection(), from(records)));
    live.push(performance.now() - started);
  }
  const base = median(timings.get('identity')!);
  const rate = (ms: number) => `${Math.round(records.length / (ms / 1000)).toLocaleString('en-US')} records/s`;
  process.stdout.write(`projection throughput over ${records.length.toLocaleString('en-US')} records (median of 5)\n`);
  process.stdout.write(`  identity reduce ${formatMs(base)} · ${rate(base)}\n`);
  for (const [name] of views) {
    const ms = median(timings.get(name)!);
    process.stdout.write(`  ${name.padEnd(8)} ${formatMs(ms)} · ${rate(ms)} · ratio ${(ms / base).toFixed(1)}× identity\n`);
  }
  process.stdout.write(`  context live (scan + shareReplay over from(records)) ${formatMs(median(live))} · ${rate(median(live))}\n`);
};

/** Context build per round: fold the log step by step and time `projectModelInput` at every model call. */
const contextBuild = (records: readonly RecordEnvelope[], counter: TokenCounter, model: string): number[] => {
  const projection = contextProjection();
  const reduceContext = reducerOf(projection);
  const reduceMemory = reducerOf(memoryProjection);
  let view = projection.initial();
  let memory = memoryProjection.initial();
  const times: number[] = [];
  const tools = [{ name: 'inspect_file', description: 'Returns a 40-line listing.', inputSchema: { type: 'object' } }];
  for (const record of records) {
    view = reduceContext(view, record);
    memory = reduceMemory(memory, record);
    if (record.type !== 'effect.requested' || (record.data as { kind: string }).kind !== 'callModel') continue;
    times.push(time(() => projectModelInput({ view, memory, actor: 'root', systemPrompt: 'You are a careful coding agent.', tools, counter, model, now: record.at })));
  }
  return times;
};

const percentile = (values: readonly number[], fraction: number): number => [...values].sort((left, right) => left - right)[Math.min(values.length - 1, Math.floor(values.length * fraction))] ?? Number.NaN;

/**
 * Projections: (1) records/s through each view over a 100,000-record session vs an identity reduce of the same
 * records in the same run; (2) context build per round for a 1,000-step session, with the estimate and with
 * gpt-tokenizer (o200k), target ≤ 10 ms median and flat from the first rounds to the last.
 */
export const main = async (): Promise<void> => {
  const big = await recordSession(12_600);
  try {
    await throughput(big.records.slice(0, 100_000));
  } finally {
    await big.cleanup();
  }
  const steps = await recordSession(1_000);
  try {
    process.stdout.write(`\ncontext build per round, 1,000-step session (${steps.records.length} records)\n`);
    for (const [label, model] of [['estimate', 'script'], ['gpt-tokenizer o200k', 'gpt-4o']] as const) {
      const counter = await tokenCounterFor(model);
      contextBuild(steps.records, counter, model);
      const times = contextBuild(steps.records, counter, model);
      const first = median(times.slice(0, 100));
      const last = median(times.slice(-100));
      process.stdout.write(`  ${label.padEnd(20)} median ${formatMs(median(times))} · p95 ${formatMs(percentile(times, 0.95))} · first 100 rounds ${formatMs(first)} · last 100 ${formatMs(last)} (target ≤ 10 ms median)\n`);
    }
  } finally {
    await steps.cleanup();
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
