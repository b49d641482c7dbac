import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
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

/** Sessions per second of `workers` worker processes draining `WORKER_SESSIONS` queued sessions (process start-up included). */
const workerThroughput = async (url: string, workspace: string, workers: number): Promise<number> => {
  const store = await openPostgresEventStore(url);
  try {
    await queueSessions(store, workspace, `w${workers}`, WORKER_SESSIONS);
    const started = performance.now();
    const children = Array.from({ length: workers }, () => startWorker(url, workspace, ['--exit-when-idle', '300']));
    await Promise.all(children.map((child) => new Promise((resolve) => child.on('close', resolve))));
    const seconds = (performance.now() - started) / 1000;
    const counts = await new PostgresSessionQueue(store).counts();
    if (counts.done < WORKER_SESSIONS * 1) throw new Error(`only ${counts.done} sessions done`);
    return WORKER_SESSIONS / seconds;
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
    const workspace = join(directory, 'workspace');
    await import('node:fs/promises').then((fs) => fs.mkdir(workspace));
    const throughput: Record<number, number> = {};
    for (const workers of [1, 2, 4]) {
      throughput[workers] = await workerThroughput(schema(`workers_${workers}`), workspace, workers);
      process.stdout.write(`postgres: ${workers} worker process(es), ${WORKER_SESSIONS} sessions of ${SESSION_ROUND_TRIPS} tool round trips: ${throughput[workers]!.toFixed(2)} sessions/s (${(throughput[workers]! * SESSION_ROUND_TRIPS).toFixed(0)} round trips/s)\n`);
    }
    const takeoverMs = await takeover(schema('takeover'), workspace);
    process.stdout.write(`postgres: lease takeover after SIGKILL: ${takeoverMs.toFixed(0)} ms (lease ${LEASE_MS} ms; target ≤ ${LEASE_MS + 1_000} ms)\n`);
    process.stdout.write(`postgres ratios: append PostgreSQL/LevelDB ${median(appendRatios).toFixed(2)}× · step latency PostgreSQL/LevelDB ${median(stepRatios).toFixed(2)}× · workers 2/1 ${(throughput[2]! / throughput[1]!).toFixed(2)}× · 4/1 ${(throughput[4]! / throughput[1]!).toFixed(2)}× (target ≥ 3×)\n`);
  } finally {
    await rm(directory, { recursive: true, force: true });
    await cluster.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
