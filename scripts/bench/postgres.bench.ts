import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RecordDraft } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { openPostgresEventStore } from '../../stores/postgres/postgres-event-store.js';
import { PostgresSessionQueue } from '../../stores/postgres/postgres-session-queue.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { startPostgresCluster } from '../../src/testing/postgres-cluster.js';
import { submitSession } from '../../src/worker/submit-session.js';
import { median, noopTool } from './bench-support.js';

/**
 * PostgreSQL against LevelDB, on a throwaway cluster with fsync on (the comparison with synced LevelDB is fair):
 * append throughput of the same records; per-step latency of a scripted session; throughput of 1, 2 and 4
 * `rein worker` processes on sessions of 50 tool round trips; and how long a killed worker's session waits before
 * another worker takes it over. Ratios are printed last, from this run only.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCHES = Number(process.env.BENCH_PG_BATCHES ?? 200);
const BATCH_SIZE = 10;
const STEP_ROUND_TRIPS = Number(process.env.BENCH_PG_STEPS ?? 100);
const WORKER_SESSIONS = Number(process.env.BENCH_PG_SESSIONS ?? 8);
const SESSION_ROUND_TRIPS = 50;
const LEASE_MS = 2_000;
const cli = fileURLToPath(new URL('../../cli/rein.js', import.meta.url));

const draft = (index: number): RecordDraft => ({
  id: `rec-${index}`,
  type: index % 3 === 0 ? 'tool.settled' : 'actor.transitioned',
  v: 1,
  at: 1_700_000_000_000 + index,
  actor: 'root',
  corr: `call-${Math.floor(index / 4)}`,
  data: { tool: 'read', ok: index % 7 !== 0, path: `src/file-${index % 50}.ts`, note: 'x'.repeat(80) },
});

const timeAppends = async (store: EventStore): Promise<number> => {
  await store.append('warm', [draft(0)], { expectedSeq: 0 });
  const started = performance.now();
  for (let batch = 0; batch < BATCHES; batch++) {
    await store.append('bench', Array.from({ length: BATCH_SIZE }, (_, offset) => draft(batch * BATCH_SIZE + offset)), { expectedSeq: batch * BATCH_SIZE });
  }
  return (BATCHES * BATCH_SIZE) / ((performance.now() - started) / 1000);
};

/** Records per second of `writers` concurrent append loops, each on its own stream (the store-bound part of workers). */
const concurrentAppends = async (store: EventStore, writers: number): Promise<number> => {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let batch = 0; batch < BATCHES; batch++) {
        await store.append(`writer-${writers}-${writer}`, Array.from({ length: BATCH_SIZE }, (_, offset) => draft(batch * BATCH_SIZE + offset)), { expectedSeq: batch * BATCH_SIZE });
      }
    }),
  );
  return (writers * BATCHES * BATCH_SIZE) / ((performance.now() - started) / 1000);
};

const stepLatency = async (store: EventStore, workspace: string): Promise<number> => {
  const script = parseScript({ turns: [...Array.from({ length: STEP_ROUND_TRIPS }, () => ({ text: 'go', toolCalls: [{ name: 'noop', arguments: {} }] })), { text: 'done' }] });
  const rein = await createRein({ store, workspace, provider: createScriptedProvider(script), tools: [noopTool], memory: false, budgets: { maxTurns: STEP_ROUND_TRIPS + 5, maxToolCalls: STEP_ROUND_TRIPS + 5 } });
  const session = await rein.createSession({ task: 'bench' });
  const times: number[] = [];
  let last = performance.now();
  session.records$.subscribe((record) => {
    if (record.type !== 'model.responded' && record.type !== 'tool.settled') return;
    const now = performance.now();
    times.push(now - last);
    last = now;
  });
  await session.send('bench');
  await session.whenQuiet();
  return median(times);
};

const startWorker = (url: string, workspace: string, extra: string[] = []): ChildProcess =>
  spawn(process.execPath, [cli, 'worker', '--store', url, '--json', '--lease-ms', String(LEASE_MS), ...extra], { cwd: workspace, stdio: ['ignore', 'pipe', 'inherit'] });

const queueSessions = async (store: Awaited<ReturnType<typeof openPostgresEventStore>>, workspace: string, prefix: string, count: number): Promise<void> => {
  const script = { turns: [...Array.from({ length: SESSION_ROUND_TRIPS }, () => ({ text: 'go', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] })), { text: 'done' }] };
  for (let index = 0; index < count; index++) {
    await submitSession(store, {
      sessionId: `${prefix}-${index}`,
      task: 'bench',
      workspace,
      provider: { name: 'scripted', source: 'inline' },
      script,
      permissions: {},
      sandbox: {},
      budgets: { maxTurns: SESSION_ROUND_TRIPS + 5, maxToolCalls: SESSION_ROUND_TRIPS + 5 },
      confirmInDoubt: false,
    });
  }
};

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a live process used so far, from /proc/<pid>/stat. */
const processCpu = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
};

/** CPU seconds of the cluster: the postmaster, its live backends and the backends that exited. */
const clusterCpu = async (dataDirectory: string): Promise<number> => {
  const postmaster = Number((await readFile(join(dataDirectory, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    if (pid !== postmaster && Number(fields[1]) !== postmaster) continue;
    total += Number(fields[11]) + Number(fields[12]) + (pid === postmaster ? Number(fields[13]) + Number(fields[14]) : 0);
  }
  return total / TICKS_PER_SECOND;
};

/** Busy CPU seconds of the whole machine (every core, every process: other work on a shared machine included). */
const machineBusy = async (): Promise<{ busy: number; cores: number }> => {
  const lines = (await readFile('/proc/stat', 'utf8')).split('\n');
  const total = lines[0]!.split(/\s+/).slice(1).map(Number);
  const idle = (total[3] ?? 0) + (total[4] ?? 0);
  return { busy: (total.reduce((sum, value) => sum + value, 0) - idle) / TICKS_PER_SECOND, cores: lines.filter((line) => /^cpu\d/.test(line)).length };
};

interface Throughput {
  sessionsPerSecond: number;
  /** CPU seconds per session: the worker processes, the PostgreSQL server. */
  workerCpu: number;
  serverCpu: number;
  /** Fraction of the machine's cores busy during the run (anything running on it). */
  machineBusy: number;
}

/** Sessions per second of `workers` running worker processes draining `WORKER_SESSIONS` sessions queued at once, with the CPU profile. */
const workerThroughput = async (url: string, workspace: string, workers: number, dataDirectory: string): Promise<Throughput> => {
  const store = await openPostgresEventStore(url);
  try {
    // The workers start first and wait (their start-up is not measured); the sessions are queued once they listen.
    const children = Array.from({ length: workers }, () => startWorker(url, workspace, ['--exit-when-idle', '4000']));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const queue = new PostgresSessionQueue(store);
    const [serverBefore, machineBefore] = [await clusterCpu(dataDirectory), await machineBusy()];
    const workerBefore = (await Promise.all(children.map((child) => processCpu(child.pid!)))).reduce((sum, value) => sum + value, 0);
    const started = performance.now();
    await queueSessions(store, workspace, `w${workers}`, WORKER_SESSIONS);
    while ((await queue.counts()).done < WORKER_SESSIONS) await new Promise((resolve) => setTimeout(resolve, 25));
    const seconds = (performance.now() - started) / 1000;
    const workerAfter = (await Promise.all(children.map((child) => processCpu(child.pid!)))).reduce((sum, value) => sum + value, 0);
    const [serverAfter, machineAfter] = [await clusterCpu(dataDirectory), await machineBusy()];
    await Promise.all(children.map((child) => new Promise((resolve) => child.on('close', resolve))));
    return {
      sessionsPerSecond: WORKER_SESSIONS / seconds,
      workerCpu: (workerAfter - workerBefore) / WORKER_SESSIONS,
      serverCpu: (serverAfter - serverBefore) / WORKER_SESSIONS,
      machineBusy: (machineAfter.busy - machineBefore.busy) / (seconds * machineAfter.cores),
    };
  } finally {
    await store.close();
  }
};

/** Milliseconds from SIGKILL of the worker holding a session until another worker claims it. */
const takeover = async (url: string, workspace: string): Promise<number> => {
  const store = await openPostgresEventStore(url);
  try {
    await queueSessions(store, workspace, 'takeover', 1);
    const claimedBy = (child: ChildProcess) =>
      new Promise<void>((resolve) => {
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('"claimed"')) resolve();
        });
      });
    const first = startWorker(url, workspace);
    await claimedBy(first);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = startWorker(url, workspace);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const killedAt = performance.now();
    first.kill('SIGKILL');
    await claimedBy(second);
    const elapsed = performance.now() - killedAt;
    second.kill('SIGTERM');
    await new Promise((resolve) => second.on('close', resolve));
    return elapsed;
  } finally {
    await store.close();
  }
};

export async function main(): Promise<void> {
  const cluster = await startPostgresCluster({ unsafeFast: false });
  const directory = await mkdtemp(join(tmpdir(), 'rein-pg-bench-'));
  try {
    const schema = (name: string) => `${cluster.url}?schema=${name}`;
    const appendRatios: number[] = [];
    const levelRates: number[] = [];
    const pgRates: number[] = [];
    const stepRatios: number[] = [];
    const levelSteps: number[] = [];
    const pgSteps: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const level = await openLevelEventStore(join(directory, `level-${round}`));
      const postgres = await openPostgresEventStore(schema(`append_${round}`));
      const levelRate = await timeAppends(level);
      const pgRate = await timeAppends(postgres);
      levelRates.push(levelRate);
      pgRates.push(pgRate);
      appendRatios.push(pgRate / levelRate);
      const levelStep = await stepLatency(level, directory);
      const pgStep = await stepLatency(postgres, directory);
      levelSteps.push(levelStep);
      pgSteps.push(pgStep);
      stepRatios.push(pgStep / levelStep);
      await level.close();
      await postgres.close();
    }
    process.stdout.write(`postgres: append ${BATCHES} batches of ${BATCH_SIZE} records, synced: LevelDB ${median(levelRates).toFixed(0)} records/s, PostgreSQL ${median(pgRates).toFixed(0)} records/s\n`);
    process.stdout.write(`postgres: step latency (model → noop tool round trips, ${STEP_ROUND_TRIPS} per session, median): LevelDB ${median(levelSteps).toFixed(2)} ms, PostgreSQL ${median(pgSteps).toFixed(2)} ms\n`);
    const concurrent: Record<number, number> = {};
    const concurrentStore = await openPostgresEventStore(schema('concurrent'));
    for (const writers of [1, 2, 4]) concurrent[writers] = await concurrentAppends(concurrentStore, writers);
    await concurrentStore.close();
    process.stdout.write(`postgres: synced appends by 1 / 2 / 4 concurrent writers (own stream each): ${concurrent[1]!.toFixed(0)} / ${concurrent[2]!.toFixed(0)} / ${concurrent[4]!.toFixed(0)} records/s\n`);
    const workspace = join(directory, 'workspace');
    await mkdir(workspace);
    const throughput: Record<number, number> = {};
    for (const workers of [1, 2, 4]) {
      const measured = await workerThroughput(schema(`workers_${workers}`), workspace, workers, cluster.dataDirectory);
      throughput[workers] = measured.sessionsPerSecond;
      process.stdout.write(
        `postgres: ${workers} worker process(es), ${WORKER_SESSIONS} sessions of ${SESSION_ROUND_TRIPS} tool round trips: ${measured.sessionsPerSecond.toFixed(2)} sessions/s (${(measured.sessionsPerSecond * SESSION_ROUND_TRIPS).toFixed(0)} round trips/s); CPU per session: workers ${(measured.workerCpu * 1000).toFixed(0)} ms, PostgreSQL ${(measured.serverCpu * 1000).toFixed(0)} ms; machine ${(measured.machineBusy * 100).toFixed(0)}% busy\n`,
      );
    }
    const takeoverMs = await takeover(schema('takeover'), workspace);
    process.stdout.write(`postgres: lease takeover after SIGKILL: ${takeoverMs.toFixed(0)} ms (lease ${LEASE_MS} ms; target ≤ ${LEASE_MS + 1_000} ms)\n`);
    process.stdout.write(`postgres ratios: append PostgreSQL/LevelDB ${median(appendRatios).toFixed(2)}× · step latency PostgreSQL/LevelDB ${median(stepRatios).toFixed(2)}× · store-bound appends 2/1 ${(concurrent[2]! / concurrent[1]!).toFixed(2)}× · 4/1 ${(concurrent[4]! / concurrent[1]!).toFixed(2)}× (target ≥ 3×) · worker sessions 2/1 ${(throughput[2]! / throughput[1]!).toFixed(2)}× · 4/1 ${(throughput[4]! / throughput[1]!).toFixed(2)}×\n`);
  } finally {
    await rm(directory, { recursive: true, force: true });
    await cluster.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
