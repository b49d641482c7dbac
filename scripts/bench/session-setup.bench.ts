import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordDraft } from '../../models/envelope.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { benchProvider, median, noopTool } from './bench-support.js';

/*
 * A session's fixed cost (issue 26: rein behind the AI SDK at N = 100 by ~50 ms per session; a PostgreSQL worker's
 * ≤ 40 ms per 10-step session): the CPU (process.cpuUsage, user + system) of everything a session pays once, in a warm
 * process, split into its phases — `createRein`, `createSession`, the session's run (`send` + `whenQuiet`) and its end
 * (`release` + `rein.close`) — for a 1-step and a 10-step session, in memory and on LevelDB (one store and one
 * workspace for every session, as a worker or a host has). The fixed cost is the 1-step session less one step, the step
 * being the (10-step − 1-step) / 9 difference; the set-up (createRein + createSession + end) is measured directly. The baseline, measured interleaved in the same run: a bare
 * `createMemoryEventStore` and the append of one record.
 *
 *   node dist/scripts/bench/session-setup.bench.js [sessions]
 *   node --cpu-prof --cpu-prof-dir=prof dist/scripts/bench/session-setup.bench.js 200   # then profile-summary.js prof
 */

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const draft: RecordDraft = { id: 'baseline-1', type: 'session.started', v: 1, at: 1_764_000_000_000, actor: 'root', data: {} };

/** The baseline: a bare memory store and one appended record. */
const baselineRun = async (): Promise<number> => {
  const started = process.cpuUsage();
  const store = createMemoryEventStore();
  await store.append('baseline', [draft], { expectedSeq: 0 });
  const used = cpuMs(started);
  await store.close();
  return used;
};

interface Phases {
  createRein: number;
  createSession: number;
  run: number;
  end: number;
}

const total = (phases: Phases): number => phases.createRein + phases.createSession + phases.run + phases.end;

/** One session of `steps` round trips on `store` in `workspace`, its phases' CPU in ms. */
const sessionPhases = async (store: EventStore, workspace: string, steps: number): Promise<Phases> => {
  let mark = process.cpuUsage();
  const lap = (): number => {
    const used = cpuMs(mark);
    mark = process.cpuUsage();
    return used;
  };
  const rein = await createRein({
    store,
    workspace,
    provider: benchProvider(steps),
    tools: [noopTool],
    budgets: { maxTurns: steps + 5, maxToolCalls: steps + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 },
  });
  const createReinMs = lap();
  const session = await rein.createSession({ task: 'bench' });
  const createSessionMs = lap();
  await session.send('bench');
  const result = await session.whenQuiet();
  if (result.status !== 'completed') throw new Error(`session-setup bench: the session ended ${result.status}: ${result.reason ?? ''}`);
  const runMs = lap();
  await session.release();
  await rein.close();
  return { createRein: createReinMs, createSession: createSessionMs, run: runMs, end: lap() };
};

const medianPhases = (runs: readonly Phases[]): Phases => ({
  createRein: median(runs.map((run) => run.createRein)),
  createSession: median(runs.map((run) => run.createSession)),
  run: median(runs.map((run) => run.run)),
  end: median(runs.map((run) => run.end)),
});

export interface SessionSetupFigures {
  baselineMs: number;
  /** Per store: the medians of the 1-step and 10-step sessions, the step and the fixed cost (ms of CPU). */
  stores: Record<'memory' | 'level', { one: Phases; ten: Phases; stepMs: number; fixedMs: number; setupMs: number }>;
}

/** Interleaved rounds: baseline, then a 1-step and a 10-step session per store; medians of `sessions` rounds after warm-up. */
export const main = async (sessions = Number(process.env.BENCH_SETUP_SESSIONS ?? 40), warmup = 10): Promise<SessionSetupFigures> => {
  const workspace = await mkdtemp(join(tmpdir(), 'rein-bench-setup-'));
  const level = await openLevelEventStore(join(workspace, '.rein'), { durability: 'sync', chainKey: await randomChainKey() });
  const memory = createMemoryEventStore();
  const stores = { memory, level } as const;
  const baseline: number[] = [];
  const runs = { memory: { one: [] as Phases[], ten: [] as Phases[] }, level: { one: [] as Phases[], ten: [] as Phases[] } };
  process.stdout.write(`session set-up: CPU of createRein + createSession + a session + its end, warm process, median of ${sessions} interleaved rounds · load average ${loadavg()[0]!.toFixed(2)}\n`);
  try {
    for (let round = 0; round < warmup + sessions; round++) {
      const timed = round >= warmup;
      const base = await baselineRun();
      if (timed) baseline.push(base);
      for (const name of ['memory', 'level'] as const) {
        const one = await sessionPhases(stores[name], workspace, 1);
        const ten = await sessionPhases(stores[name], workspace, 10);
        if (timed) {
          runs[name].one.push(one);
          runs[name].ten.push(ten);
        }
      }
    }
  } finally {
    await level.close();
    await memory.close();
    await rm(workspace, { recursive: true, force: true });
  }
  const baselineMs = median(baseline);
  const figures = { baselineMs, stores: {} as SessionSetupFigures['stores'] };
  process.stdout.write(`  baseline (createMemoryEventStore + one append): ${baselineMs.toFixed(3)} ms\n`);
  for (const name of ['memory', 'level'] as const) {
    const one = medianPhases(runs[name].one);
    const ten = medianPhases(runs[name].ten);
    const stepMs = (median(runs[name].ten.map(total)) - median(runs[name].one.map(total))) / 9;
    const fixedMs = median(runs[name].one.map(total)) - stepMs;
    // Set-up measured directly (no step subtracted, so far less noisy than the fixed cost): createRein + createSession + end.
    const setupMs = median(runs[name].one.map((run) => run.createRein + run.createSession + run.end));
    figures.stores[name] = { one, ten, stepMs, fixedMs, setupMs };
    const line = (label: string, phases: Phases) =>
      `    ${label}: createRein ${phases.createRein.toFixed(2)} · createSession ${phases.createSession.toFixed(2)} · run ${phases.run.toFixed(2)} · end ${phases.end.toFixed(2)} ms\n`;
    process.stdout.write(`  ${name === 'memory' ? 'in memory' : 'LevelDB (synced)'}: set-up ${setupMs.toFixed(2)} ms per session (${(setupMs / baselineMs).toFixed(0)}× the baseline) · fixed cost ${fixedMs.toFixed(2)} ms (${(fixedMs / baselineMs).toFixed(0)}×) · ${stepMs.toFixed(2)} ms per step\n`);
    process.stdout.write(line(' 1 step ', one));
    process.stdout.write(line('10 steps', ten));
  }
  return figures;
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2] === undefined ? undefined : Number(process.argv[2]));
