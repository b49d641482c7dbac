import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './bench-support.js';

/** The package root: `import('rein')` from here resolves through package.json `exports`, as a host's import does. */
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Printed by each child as it ends: the CPU time (user + system, µs) the whole process used. */
const reportCpu = "process.on('exit', () => { const usage = process.cpuUsage(); process.stdout.write(String(usage.user + usage.system)); });";

/** Wall time of one whole process, spawn to exit, and the CPU time it reported (ms). */
const timeProcess = (code: string): { wall: number; cpu: number } => {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', `${reportCpu}\n${code}`], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const wall = performance.now() - started;
  if (result.status !== 0) throw new Error(`${code} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return { wall, cpu: Number(result.stdout.toString()) / 1000 };
};

/**
 * Library start-up: a process that does `await import('rein')` (and one that also imports `rein/testing`), timed
 * spawn to exit, `runs` times interleaved with a bare node process (the same-run baseline). Prints the medians of wall
 * time and of the CPU time each process used (steadier on a shared machine) and their ratios to the baseline, with
 * tsc's unbundled output (what `rein` resolved to before dist/lib) for comparison. Target: ≤ 2.5× (issue 31).
 */
export const main = async (runs = 20): Promise<void> => {
  const cases: Array<{ label: string; code: string; target?: number }> = [
    { label: 'node -e 0', code: '' },
    { label: "import('rein')", code: "await import('rein');", target: 2.5 },
    { label: '+ rein/testing', code: "await import('rein'); await import('rein/testing');" },
    { label: 'unbundled', code: "await import('./dist/src/index.js');" },
  ];
  const times = new Map(cases.map((entry) => [entry.label, { wall: [] as number[], cpu: [] as number[] }]));
  for (const entry of cases) timeProcess(entry.code);
  for (let run = 0; run < runs; run++) {
    for (const entry of cases) {
      const { wall, cpu } = timeProcess(entry.code);
      times.get(entry.label)!.wall.push(wall);
      times.get(entry.label)!.cpu.push(cpu);
    }
  }
  const baseWall = median(times.get('node -e 0')!.wall);
  const baseCpu = median(times.get('node -e 0')!.cpu);
  process.stdout.write(`Library import (whole process, median of ${runs} interleaved runs; target import('rein') ≤ 2.5× node -e 0)\n`);
  for (const entry of cases) {
    const wall = median(times.get(entry.label)!.wall);
    const cpu = median(times.get(entry.label)!.cpu);
    const ratios = entry.label === 'node -e 0' ? 'baseline' : `ratio ${(wall / baseWall).toFixed(2)}× wall, ${(cpu / baseCpu).toFixed(2)}× CPU`;
    const verdict = entry.target === undefined ? '' : ` · ${wall / baseWall <= entry.target ? 'met' : 'NOT met'}`;
    process.stdout.write(`  ${entry.label.padEnd(15)} ${wall.toFixed(1).padStart(7)} ms wall ${cpu.toFixed(1).padStart(7)} ms CPU · ${ratios}${verdict}\n`);
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2]) || undefined);
