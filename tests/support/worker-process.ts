import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { jsonLines } from './cli.js';

const builtIndex = new URL('../../dist/src/index.js', import.meta.url).href;
const zodUrl = pathToFileURL(createRequire(import.meta.url).resolve('zod')).href;

/**
 * A worker process built from the library (`runWorker`) with one extra tool, `count`: it appends a line naming the
 * worker to `count.txt` in the workspace (so the test counts executions), then waits `TOOL_MS`. Its resume policy is
 * `never-rerun`: a call left in doubt is never run again. Events are printed as JSON lines.
 */
const WORKER_SCRIPT = `
const { appendFileSync } = await import('node:fs');
const { join } = await import('node:path');
const { z } = await import(process.env.ZOD_URL);
const rein = await import(process.env.REIN_INDEX);
const counter = rein.defineTool({
  name: 'count',
  description: 'Record one execution in count.txt, then wait.',
  parameters: z.object({ label: z.string() }).strict(),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'never-rerun',
  async execute(args, context) {
    appendFileSync(join(context.workspace.root, 'count.txt'), process.env.WORKER_NAME + ' ' + args.label + '\\n');
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.TOOL_MS)));
    return { ok: true, output: 'counted' };
  },
});
const store = await rein.openPostgresEventStore(process.env.STORE_URL, { retryForMs: 60000 });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
const report = await rein.runWorker({
  store,
  owner: process.env.WORKER_NAME,
  leaseMs: Number(process.env.LEASE_MS),
  pollMs: 100,
  concurrency: Number(process.env.CONCURRENCY || 1),
  tools: [...rein.builtinTools(), counter],
  signal: stop.signal,
  onEvent: (event) => process.stdout.write(JSON.stringify(event) + '\\n'),
});
process.stdout.write(JSON.stringify({ type: 'stopped', ...report }) + '\\n');
await store.close();
`;

/** A running worker process and what it printed so far. */
export interface WorkerProcess {
  child: ChildProcess;
  events(): Array<Record<string, any>>;
  /** Resolves with the first event matching `predicate`. */
  waitFor(predicate: (event: Record<string, any>) => boolean): Promise<Record<string, any>>;
  exited: Promise<number | null>;
}

export const startWorkerProcess = (options: { name: string; storeUrl: string; leaseMs: number; toolMs?: number; concurrency?: number }): WorkerProcess => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WORKER_SCRIPT], {
    env: {
      ...process.env,
      REIN_INDEX: builtIndex,
      ZOD_URL: zodUrl,
      STORE_URL: options.storeUrl,
      WORKER_NAME: options.name,
      LEASE_MS: String(options.leaseMs),
      TOOL_MS: String(options.toolMs ?? 0),
      CONCURRENCY: String(options.concurrency ?? 1),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const events = () => jsonLines(stdout);
  return {
    child,
    events,
    exited,
    waitFor: (predicate) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = events().find(predicate);
          if (found) {
            listeners.delete(check);
            resolve(found);
          }
        };
        listeners.add(check);
        void exited.then(() => {
          check();
          if (listeners.has(check)) reject(new Error(`worker ${options.name} exited before the event; stderr: ${stderr}`));
        });
        check();
      }),
  };
};
