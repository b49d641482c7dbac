import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { encodeValue } from '../../stores/record-codec.js';
import { formatMs, median, runBenchSession } from './bench-support.js';

/** Baseline: one raw classic-level batch per step holding the same number of similar records, synced or not. */
const rawBatchMs = async (sync: boolean, recordsPerBatch: number, batches: number): Promise<number> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-raw-'));
  const db = new ClassicLevel<string, Uint8Array>(directory, { valueEncoding: 'view' });
  await db.open();
  const value = encodeValue({ stream: 's', seq: 1, id: 'abcdefghi', type: 'actor.transitioned', v: 1, at: Date.now(), actor: 'root', data: { actor: 'root', event: 'tool.settled', from: { running: 'runningTools' }, to: { running: 'awaitingModel' } } });
  const times: number[] = [];
  let key = 0;
  for (let batch = 0; batch < batches; batch++) {
    const started = performance.now();
    await db.batch(Array.from({ length: recordsPerBatch }, () => ({ type: 'put' as const, key: `e!${(key++).toString(16).padStart(12, '0')}`, value })), { sync });
    times.push(performance.now() - started);
  }
  await db.close();
  await rm(directory, { recursive: true, force: true });
  return median(times);
};

/**
 * Step overhead: scripted sessions of model → no-op-tool round trips at 100, 1,000 and 10,000 round trips, sync on
 * and off. Prints the median harness time per step (targets: ≤ 1 ms synced, ≤ 0.2 ms relaxed, flat across sizes)
 * and its ratio to a raw LevelDB batch of the same size measured in the same run.
 */
export const main = async (sizes: readonly number[] = [100, 1_000, 10_000]): Promise<void> => {
  process.stdout.write('step overhead (median harness time per step; a step = one input applied, its batch appended, effects started)\n');
  for (const durability of ['sync', 'relaxed', 'memory'] as const) {
    const raw = durability === 'memory' ? Number.NaN : await rawBatchMs(durability === 'sync', 4, 300);
    for (const roundTrips of sizes) {
      const run = await runBenchSession({ roundTrips, durability });
      const stepMedian = median(run.stepTimes);
      const target = durability === 'sync' ? '≤ 1 ms' : durability === 'relaxed' ? '≤ 0.2 ms' : 'harness CPU only, no I/O';
      const baseline = Number.isNaN(raw) ? '' : ` · raw batch ${formatMs(raw)} · ratio ${(stepMedian / raw).toFixed(2)}×`;
      process.stdout.write(`  ${durability.padEnd(7)} ${String(roundTrips).padStart(6)} round trips: ${formatMs(stepMedian)} per step (${target}) · total ${(run.totalMs / 1000).toFixed(2)} s${baseline}\n`);
      await run.cleanup();
    }
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
