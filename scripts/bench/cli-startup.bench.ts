import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openLevelEventStore } from '../../stores/index.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { median, noopTool } from './bench-support.js';

/** The `rein` binary as installed (`bin` in package.json): the bundled CLI. */
const cliPath = fileURLToPath(new URL('../../cli/rein.js', import.meta.url));

/** A small store: one completed session of three round trips, as `rein show` would meet it. */
const smallStore = async (workspace: string): Promise<string> => {
  const store = await openLevelEventStore(join(workspace, '.rein'));
  const script = parseScript({ turns: [...Array.from({ length: 3 }, () => ({ text: 'go', toolCalls: [{ name: 'noop', arguments: {} }] })), { text: 'done' }] });
  const rein = await createRein({ store, workspace, provider: createScriptedProvider(script), tools: [noopTool] });
  const session = await rein.startSession({ task: 'startup bench' });
  await session.whenQuiet();
  await store.close();
  return session.id;
};

/** Wall time of one whole process, spawn to exit (what a person waits for). */
const timeProcess = (args: readonly string[], cwd: string): number => {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return elapsed;
};

/**
 * CLI start-up: `rein --help`, `rein sessions` and `rein show <id>` on a small store, each as a whole process timed
 * from spawn to exit, `runs` times interleaved with a bare `node -e 0` (the same-run baseline). Prints the medians
 * and the ratio to the baseline. Targets: ≤ 150 ms and ≤ 4× `node -e 0`.
 */
export const main = async (runs = 20): Promise<void> => {
  const workspace = await mkdtemp(join(tmpdir(), 'rein-bench-cli-'));
  try {
    const sessionId = await smallStore(workspace);
    const cases: Array<{ label: string; args: string[] }> = [
      { label: 'node -e 0', args: ['-e', '0'] },
      { label: 'rein --help', args: [cliPath, '--help'] },
      { label: 'rein sessions', args: [cliPath, 'sessions'] },
      { label: 'rein show', args: [cliPath, 'show', sessionId] },
    ];
    const times = new Map(cases.map((entry) => [entry.label, [] as number[]]));
    for (const entry of cases) timeProcess(entry.args, workspace);
    for (let run = 0; run < runs; run++) for (const entry of cases) times.get(entry.label)!.push(timeProcess(entry.args, workspace));
    const baseline = median(times.get('node -e 0')!);
    process.stdout.write(`CLI start-up (whole process, median of ${runs} interleaved runs; targets ≤ 150 ms and ≤ 4× node -e 0)\n`);
    for (const entry of cases) {
      const value = median(times.get(entry.label)!);
      const verdict = entry.label === 'node -e 0' ? 'baseline' : `ratio ${(value / baseline).toFixed(2)}× · ${value <= 150 && value <= 4 * baseline ? 'met' : 'NOT met'}`;
      process.stdout.write(`  ${entry.label.padEnd(14)} ${value.toFixed(1).padStart(7)} ms · ${verdict}\n`);
    }
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2]) || undefined);
