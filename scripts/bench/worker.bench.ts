import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openPostgresEventStore, type PostgresEventStore } from '../../stores/postgres/postgres-event-store.js';
import { PostgresSessionQueue } from '../../stores/postgres/postgres-session-queue.js';
import { findPostgresBinaries, startPostgresCluster } from '../../src/testing/postgres-cluster.js';
import { submitSession } from '../../src/worker/submit-session.js';

/*
 * `rein worker` on PostgreSQL (issue 26 goals): what a scripted 10-step session costs a worker process in CPU (target ≤
 * 40 ms), and how sessions that wait on a model scale — a loopback OpenAI-compatible model answering each call after
 * 200 ms — with `--concurrency` in one worker and across 4 workers (target: 4 workers ≥ 3× one worker of concurrency
 * 1). Each shape is measured after one warm-up session per slot (a running worker, not its start). Every figure and
 * ratio comes from this run. Skipped (with a line saying so) when PostgreSQL is not installed.
 */

const CPU_SESSIONS = Number(process.env.BENCH_WORKER_SESSIONS ?? 8);
const CPU_STEPS = 10;
const WAIT_SESSIONS = Number(process.env.BENCH_WORKER_WAIT_SESSIONS ?? 8);
const WAIT_CALLS = 5;
const LATENCY_MS = 200;
const TICKS_PER_SECOND = 100;
/**
 * Extra node flags for the worker processes, e.g. `--cpu-prof --cpu-prof-dir=prof-worker` (NODE_OPTIONS refuses
 * --cpu-prof). A relative profile directory is resolved here: the workers run in a temporary workspace that is removed.
 */
const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '')
  .split(' ')
  .filter((arg) => arg !== '')
  .map((arg) => (arg.startsWith('--cpu-prof-dir=') ? `--cpu-prof-dir=${resolve(arg.slice('--cpu-prof-dir='.length))}` : arg));
const cli = fileURLToPath(new URL('../../cli/rein.js', import.meta.url));

/** CPU seconds (user + system) a live process used so far, from /proc/<pid>/stat. */
const processCpu = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
};

const chunk = (choices: unknown[], usage: unknown = null): string => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1764101234, model: 'loopback-1', choices, usage })}\n\n`;

/**
 * A loopback OpenAI-compatible model: every call is answered after `latencyMs`, as a real chat-completions event
 * stream; the reply is a `list_dir` call until the request holds `calls - 1` assistant messages, then a final text.
 */
const startLoopbackModel = async (latencyMs: number, calls: number): Promise<{ url: string; server: Server }> => {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (data: Buffer) => (body += data.toString()));
    request.on('end', () => {
      const messages = (JSON.parse(body) as { messages?: Array<{ role: string }> }).messages ?? [];
      const done = messages.filter((message) => message.role === 'assistant').length;
      const asking = done < calls - 1;
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(chunk([{ index: 0, delta: { role: 'assistant', content: asking ? '' : 'done' }, finish_reason: null }]));
        if (asking) response.write(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: `call_${done}`, type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }] }, finish_reason: null }]));
        response.write(chunk([{ index: 0, delta: {}, finish_reason: asking ? 'tool_calls' : 'stop' }]));
        response.write(chunk([], { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }));
        response.end('data: [DONE]\n\n');
      }, latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
};

const startWorker = (url: string, workspace: string, concurrency: number): ChildProcess =>
  spawn(process.execPath, [...nodeArgs, cli, 'worker', '--store', url, '--json', '--concurrency', String(concurrency)], { cwd: workspace, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, OPENAI_API_KEY: 'loopback' } });

/** Resolves once the worker's start-up is over: it used less than 20 ms of CPU in the last 400 ms (it waits on the queue). */
const started = async (child: ChildProcess): Promise<void> => {
  const deadline = performance.now() + 60_000;
  let last = -1e9;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`a worker exited (${child.exitCode}) before it started`);
    const now = await processCpu(child.pid!);
    if (now - last < 0.02 || performance.now() > deadline) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
};

type Provider = { name: string; model?: string; source?: string };

const queue = async (store: PostgresEventStore, workspace: string, prefix: string, count: number, provider: Provider, script?: unknown, steps = CPU_STEPS): Promise<void> => {
  for (let index = 0; index < count; index++) {
    await submitSession(store, {
      sessionId: `${prefix}-${index}`,
      task: 'bench',
      workspace,
      provider,
      ...(script === undefined ? {} : { script }),
      permissions: {},
      sandbox: {},
      budgets: { maxTurns: steps + 5, maxToolCalls: steps + 5 },
      confirmInDoubt: false,
    });
  }
};

interface Drained {
  seconds: number;
  sessionsPerSecond: number;
  /** Worker CPU seconds per session (every worker process, user + system). */
  cpuPerSession: number;
}

/** Start `workers` worker processes of `concurrency`, warm them up, queue the sessions, and time until all are done. */
const drain = async (url: string, workspace: string, workers: number, concurrency: number, count: number, submit: (store: PostgresEventStore, prefix: string, count: number) => Promise<void>): Promise<Drained> => {
  const store = await openPostgresEventStore(url);
  try {
    const children = Array.from({ length: workers }, () => startWorker(url, workspace, concurrency));
    await Promise.all(children.map(started));
    // Warm-up: one session per slot first (a fresh process runs its first sessions on cold code, ~3× the CPU of later
    // ones), so the figures are a running worker's.
    const sessions = new PostgresSessionQueue(store);
    const warm = workers * concurrency;
    await submit(store, 'warm', warm);
    while ((await sessions.counts()).done < warm) await new Promise((resolve) => setTimeout(resolve, 20));
    const cpuBefore = (await Promise.all(children.map((child) => processCpu(child.pid!)))).reduce((sum, value) => sum + value, 0);
    const begun = performance.now();
    await submit(store, 'run', count);
    while ((await sessions.counts()).done < warm + count) await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = (performance.now() - begun) / 1000;
    const cpuAfter = (await Promise.all(children.map((child) => processCpu(child.pid!)))).reduce((sum, value) => sum + value, 0);
    await Promise.all(
      children.map((child) => {
        const closed = new Promise((resolve) => child.on('close', resolve));
        child.kill('SIGTERM');
        return closed;
      }),
    );
    return { seconds, sessionsPerSecond: count / seconds, cpuPerSession: (cpuAfter - cpuBefore) / count };
  } finally {
    await store.close();
  }
};

export async function main(): Promise<void> {
  if (!findPostgresBinaries()) {
    process.stdout.write('worker: PostgreSQL is not installed; skipped\n');
    return;
  }
  const cluster = await startPostgresCluster({ unsafeFast: false });
  const workspace = await mkdtemp(join(tmpdir(), 'rein-worker-bench-'));
  const model = await startLoopbackModel(LATENCY_MS, WAIT_CALLS);
  try {
    await writeFile(join(workspace, 'a.txt'), 'alpha\n');
    const schema = (name: string) => `${cluster.url}?schema=${name}`;
    const script = { turns: [...Array.from({ length: CPU_STEPS }, () => ({ text: 'go', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] })), { text: 'done' }] };
    const cpu = await drain(schema('worker_cpu'), workspace, 1, 1, CPU_SESSIONS, (store, prefix, count) => queue(store, workspace, prefix, count, { name: 'scripted', source: 'inline' }, script));
    process.stdout.write(
      `worker: ${CPU_SESSIONS} scripted sessions of ${CPU_STEPS} list_dir round trips, 1 worker: ${(cpu.cpuPerSession * 1000).toFixed(0)} ms of worker CPU per session (target ≤ 40 ms: ${cpu.cpuPerSession <= 0.04 ? 'met' : 'not met'}), ${cpu.sessionsPerSecond.toFixed(2)} sessions/s · load average ${loadavg()[0]!.toFixed(1)}\n`,
    );
    // BENCH_WORKER_ONLY=cpu stops here (a profile of the scripted sessions alone).
    if (process.env.BENCH_WORKER_ONLY === 'cpu') return;
    const provider = { name: 'openai', model: 'loopback-1', source: model.url };
    const shapes: Array<{ label: string; workers: number; concurrency: number }> = [
      { label: '1 worker, --concurrency 1', workers: 1, concurrency: 1 },
      { label: '1 worker, --concurrency 4', workers: 1, concurrency: 4 },
      { label: '4 workers, --concurrency 1', workers: 4, concurrency: 1 },
    ];
    const rates: number[] = [];
    for (const [index, shape] of shapes.entries()) {
      const run = await drain(schema(`worker_wait_${index}`), workspace, shape.workers, shape.concurrency, WAIT_SESSIONS, (store, prefix, count) => queue(store, workspace, prefix, count, provider, undefined, WAIT_CALLS));
      rates.push(run.sessionsPerSecond);
      process.stdout.write(`worker: ${shape.label}: ${WAIT_SESSIONS} sessions of ${WAIT_CALLS} model calls (${LATENCY_MS} ms each, loopback) in ${run.seconds.toFixed(2)} s, ${run.sessionsPerSecond.toFixed(2)} sessions/s, ${(run.cpuPerSession * 1000).toFixed(0)} ms worker CPU per session\n`);
    }
    const [one, concurrent, four] = rates as [number, number, number];
    process.stdout.write(`worker ratios (model-bound sessions, to 1 worker of concurrency 1): --concurrency 4 ${(concurrent / one).toFixed(2)}× · 4 workers ${(four / one).toFixed(2)}× (target ≥ 3×: ${four / one >= 3 ? 'met' : 'not met'}) · load average ${loadavg()[0]!.toFixed(1)}\n`);
  } finally {
    await new Promise((resolve) => model.server.close(resolve));
    await cluster.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
