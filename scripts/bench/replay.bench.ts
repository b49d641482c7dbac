import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { verifyRecords } from '../../src/host/replay.js';
import { verifyBlobs } from '../../src/session/verify-blobs.js';
import { formatMs, median, runBenchSession } from './bench-support.js';

/**
 * Replay: verify a 10,000-step session (read + re-apply + regenerate + compare) against a raw read of the same
 * records, interleaved over several rounds. Target: ≤ 5× the raw read. Then `rein replay`'s blob check (every blob
 * the log names read back once and hash-checked), as its share of the replay: it must stay a fraction of it.
 */
export const main = async (roundTrips = 5_000): Promise<void> => {
  const run = await runBenchSession({ roundTrips, durability: 'relaxed' });
  try {
    const raw: number[] = [];
    const verify: number[] = [];
    const blobCheck: number[] = [];
    let records = 0;
    let blobs = 0;
    for (let round = 0; round < 5; round++) {
      let started = performance.now();
      records = (await run.store.read(run.sessionId)).length;
      raw.push(performance.now() - started);
      started = performance.now();
      const result = verifyRecords(run.sessionId, await run.store.read(run.sessionId));
      result.tree?.stop();
      verify.push(performance.now() - started);
      const read = await run.store.read(run.sessionId);
      started = performance.now();
      blobs = await verifyBlobs(run.store, run.sessionId, read);
      blobCheck.push(performance.now() - started);
    }
    const rawMedian = median(raw);
    const verifyMedian = median(verify);
    process.stdout.write(`replay of ${roundTrips * 2} steps (${records} records)\n`);
    process.stdout.write(`  raw read ${formatMs(rawMedian)} · verified replay ${formatMs(verifyMedian)} · ratio ${(verifyMedian / rawMedian).toFixed(2)}× (target ≤ 5×)\n`);
    const blobMedian = median(blobCheck);
    process.stdout.write(`  blob check ${formatMs(blobMedian)} for ${blobs} blobs (${formatMs(blobMedian / Math.max(1, blobs))} each) · ${(blobMedian / verifyMedian).toFixed(2)}× the verified replay (target ≤ 1×)\n`);
  } finally {
    await run.cleanup();
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
