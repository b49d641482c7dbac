import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, runBenchSession } from './bench-support.js';

/**
 * What loading the project instructions costs per model call (docs/model-input.md: *Project instructions*): the same in-memory
 * session of N round trips (a fake model, one no-op tool per turn) without instructions (`instructions: false`, the
 * baseline), with the feature on and no file present (three `stat`s per call), and with an 8 KB `AGENTS.md` at the
 * root (read once, then a `stat` per call; the unchanged text is not recorded again). Interleaved, median of `runs`;
 * prints CPU µs per round trip and the ratio to the baseline measured in the same run.
 */
export const main = async (roundTrips = 400, runs = 5): Promise<void> => {
  process.stdout.write(`instructions: ${roundTrips} round trips per run, median of ${runs}; load average ${loadavg()[0]!.toFixed(2)}\n`);
  const cpuOf = async (variant: 'off' | 'none' | 'file'): Promise<number> => {
    const started = process.cpuUsage();
    const run = await runBenchSession({
      roundTrips,
      durability: 'memory',
      ...(variant === 'off' ? { instructions: false as const } : {}),
      ...(variant === 'file' ? { prepare: (workspace: string) => writeFile(join(workspace, 'AGENTS.md'), `# Project rules\n${'Keep functions small and tested. '.repeat(250)}\n`) } : {}),
    });
    const cpu = process.cpuUsage(started);
    const recorded = (await run.store.read(run.sessionId)).filter((record) => record.type === 'instructions.loaded').length;
    await run.cleanup();
    if (variant === 'file' && recorded !== 1) throw new Error(`expected one instructions.loaded, got ${recorded}`);
    return (cpu.user + cpu.system) / roundTrips;
  };
  const samples: Record<'off' | 'none' | 'file', number[]> = { off: [], none: [], file: [] };
  await cpuOf('off');
  for (let run = 0; run < runs; run++) for (const variant of ['off', 'none', 'file'] as const) samples[variant].push(await cpuOf(variant));
  const off = median(samples.off);
  const line = (name: string, value: number) => `  ${name.padEnd(28)} ${Math.round(value).toLocaleString('en-US').padStart(7)} µs CPU per round trip  (${(value / off).toFixed(2)}× the baseline)\n`;
  process.stdout.write(line('baseline (instructions off)', off));
  process.stdout.write(line('on, no instruction file', median(samples.none)));
  process.stdout.write(line('on, 8 KB AGENTS.md', median(samples.file)));
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 400), Number(process.argv[3] ?? 5));
