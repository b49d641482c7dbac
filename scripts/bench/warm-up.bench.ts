import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median, runBenchSession } from './bench-support.js';
import { floorRun } from './floor.js';

/*
 * How long the in-memory step takes to reach its steady state, from a fresh process. V8 optimises a function only
 * after thousands of calls, and most of a round trip's functions run once per round trip: a fresh process runs the
 * first few thousand round trips mostly in the interpreter and the baseline compiler. step.bench (a short warm-up) and
 * the peers harness (a fresh process per case) measure that lukewarm regime; this prints the whole curve — one
 * fresh child process running `sessions` in-memory sessions of `roundTrips` each, back to back — and each session's
 * ratio to the floor of the same run (floor.ts, measured before and after the child).
 *
 *   node dist/scripts/bench/warm-up.bench.js [sessions] [roundTrips]
 */

interface SessionFigure {
  /** Wall and CPU (user + system) per round trip, µs. */
  wallUs: number;
  cpuUs: number;
}

export interface WarmUpFigures {
  floorUs: number;
  sessions: SessionFigure[];
  /** The first session's wall per round trip over its set-up and round trips 1–10 (the process's first session), and over 11 to the end, µs. */
  firstTenUs: number;
  restOfFirstUs: number;
  /** The median wall per round trip of the last three sessions (or fewer), µs. */
  steadyUs: number;
  /** Round trips run before the first session whose wall is within 20% of the steady state. */
  roundTripsToSteady: number;
}

const child = async (sessions: number, roundTrips: number): Promise<void> => {
  const figures: SessionFigure[] = [];
  let firstTenUs = 0;
  let restOfFirstUs = 0;
  for (let index = 0; index < sessions; index++) {
    let tenthAt = 0;
    const onTurn = index === 0 ? (done: number) => { if (done === Math.min(10, roundTrips)) tenthAt = performance.now(); } : undefined;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const run = await runBenchSession({ roundTrips, durability: 'memory', ...(onTurn ? { onTurn } : {}) });
    const ended = performance.now();
    const used = process.cpuUsage(cpu);
    await run.cleanup();
    if (index === 0) {
      const ten = Math.min(10, roundTrips);
      firstTenUs = ((tenthAt - started) * 1000) / ten;
      restOfFirstUs = roundTrips > ten ? ((ended - tenthAt) * 1000) / (roundTrips - ten) : 0;
    }
    figures.push({ wallUs: ((ended - started) * 1000) / roundTrips, cpuUs: (used.user + used.system) / roundTrips });
  }
  process.stdout.write(JSON.stringify({ figures, firstTenUs, restOfFirstUs }));
};

/** The built script the child runs (this file, or its build in dist/ when a test runs the TypeScript source). */
const childScript = (): string => {
  const self = fileURLToPath(import.meta.url);
  return self.endsWith('.ts') ? join(dirname(self), '../../dist/scripts/bench/warm-up.bench.js') : self;
};

const us = (value: number): string => `${Math.round(value).toLocaleString('en-US')} µs`;

export const main = async (sessions = 12, roundTrips = 500): Promise<WarmUpFigures> => {
  process.stdout.write(`warm-up: ${sessions} in-memory sessions of ${roundTrips} round trips in one fresh process; load average ${loadavg()[0]!.toFixed(2)}\n`);
  const floors = [(await floorRun(roundTrips)).perRoundTripUs];
  const result = spawnSync(process.execPath, [childScript(), '--child', String(sessions), String(roundTrips)], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (result.status !== 0) throw new Error(`warm-up child failed (${result.status}): ${result.stderr}`);
  floors.push((await floorRun(roundTrips)).perRoundTripUs);
  const floorUs = (floors[0]! + floors[1]!) / 2;
  const { figures, firstTenUs, restOfFirstUs } = JSON.parse(result.stdout) as { figures: SessionFigure[]; firstTenUs: number; restOfFirstUs: number };
  const steadyUs = median(figures.slice(-3).map((figure) => figure.wallUs));
  const steadyAt = figures.findIndex((figure) => figure.wallUs <= steadyUs * 1.2);
  const roundTripsToSteady = steadyAt * roundTrips;
  const ratio = (value: number): string => `${(value / floorUs).toFixed(2)}×`;
  process.stdout.write(`  floor ${us(floorUs)} per round trip (mean of before and after the child: ${floors.map(us).join(' / ')})\n`);
  process.stdout.write(`  first session: set-up + round trips 1–10 ${us(firstTenUs)} (${ratio(firstTenUs)}) · the rest ${us(restOfFirstUs)} (${ratio(restOfFirstUs)})\n`);
  process.stdout.write(`  per session (wall/CPU per round trip, µs): ${figures.map((figure) => `${Math.round(figure.wallUs)}/${Math.round(figure.cpuUs)}`).join(' ')}\n`);
  process.stdout.write(`  steady state (median of the last ${Math.min(3, figures.length)}) ${us(steadyUs)} · ratio ${ratio(steadyUs)} the floor · within 20% of it after ${roundTripsToSteady.toLocaleString('en-US')} round trips\n`);
  return { floorUs, sessions: figures, firstTenUs, restOfFirstUs, steadyUs, roundTripsToSteady };
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--child') await child(Number(process.argv[3]), Number(process.argv[4]));
  else await main(Number(process.argv[2]) || undefined, Number(process.argv[3]) || undefined);
}
