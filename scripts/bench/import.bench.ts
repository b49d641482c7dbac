import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './bench-support.js';

/** The package root: `import('rein')` from here resolves through package.json `exports`, as a host's import does. */
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Wall time of one whole process, spawn to exit. */
const timeProcess = (args: readonly string[]): number => {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return elapsed;
};

/**
 * Library start-up: a process that does `await import('rein')` (and one that also imports `rein/testing`), timed
 * spawn to exit, `runs` times interleaved with a bare `node -e 0` (the same-run baseline). Prints the medians and the
 * ratio to the baseline. Target: `import('rein')` ≤ 2.5× `node -e 0` (issue 31).
 */
export const main = async (runs = 20): Promise<void> => {
  const cases: Array<{ label: string; args: string[]; target?: number }> = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: "import('rein')", args: ['--input-type=module', '-e', "await import('rein')"], target: 2.5 },
    { label: '+ rein/testing', args: ['--input-type=module', '-e', "await import('rein'); await import('rein/testing')"] },
    // For comparison: tsc's unbundled output, which `rein` resolved to before dist/lib.
    { label: 'unbundled', args: ['--input-type=module', '-e', "await import('./dist/src/index.js')"] },
  ];
  const times = new Map(cases.map((entry) => [entry.label, [] as number[]]));
  for (const entry of cases) timeProcess(entry.args);
  for (let run = 0; run < runs; run++) for (const entry of cases) times.get(entry.label)!.push(timeProcess(entry.args));
  const baseline = median(times.get('node -e 0')!);
  process.stdout.write(`Library import (whole process, median of ${runs} interleaved runs; target import('rein') ≤ 2.5× node -e 0)\n`);
  for (const entry of cases) {
    const value = median(times.get(entry.label)!);
    const ratio = value / baseline;
    const verdict = entry.label === 'node -e 0' ? 'baseline' : `ratio ${ratio.toFixed(2)}×${entry.target ? ` · ${ratio <= entry.target ? 'met' : 'NOT met'}` : ''}`;
    process.stdout.write(`  ${entry.label.padEnd(15)} ${value.toFixed(1).padStart(7)} ms · ${verdict}\n`);
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2]) || undefined);
