import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runBenchSession } from './bench-support.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/**
 * Goal 4's long run: one session of `steps` round trips (fake model, one no-op tool each) on the default synced
 * LevelDB store, through the public API. Resident memory is sampled every 1,000 steps; the heap is measured after
 * forced GCs at a tenth of the run and at its end. Targets: peak RSS under 300 MB for 100,000 steps, heap growth
 * ≤ 1 KB per step. A synced run of 100,000 steps takes several minutes; `npm run bench` runs it last.
 */
export const main = async (steps = 100_000): Promise<void> => {
  process.stdout.write(`long session: ${steps.toLocaleString('en-US')} round trips on the synced LevelDB store · load average ${loadavg()[0]!.toFixed(2)}\n`);
  const early = Math.max(1_000, Math.floor(steps / 10));
  const rss: Array<[number, number]> = [];
  const heaps = new Map<number, number>();
  let peakRss = 0;
  const onTurn = (done: number) => {
    if (done % 1_000 !== 0 && done !== steps) return;
    const now = process.memoryUsage().rss;
    peakRss = Math.max(peakRss, now);
    if (done % (steps / 10) === 0) rss.push([done, now]);
    if (done === early || done === steps) {
      gc();
      gc();
      heaps.set(done, process.memoryUsage().heapUsed);
    }
  };
  const run = await runBenchSession({ roundTrips: steps, durability: 'sync', onTurn });
  await run.cleanup();
  const growth = (heaps.get(steps)! - heaps.get(early)!) / (2 * (steps - early));
  process.stdout.write(`  RSS every ${(steps / 10).toLocaleString('en-US')} steps: ${rss.map(([, value]) => mb(value)).join(' → ')}\n`);
  process.stdout.write(`  4. peak RSS ${mb(peakRss)} (target < 300 MB: ${peakRss < 300 * 1024 * 1024 ? 'met' : 'NOT met'}) · heap growth ${Math.round(growth)} B per step after forced GC between step ${early.toLocaleString('en-US')} and the end (target ≤ 1,024 B: ${growth <= 1024 ? 'met' : 'NOT met'}) · ${((run.totalMs * 1000) / steps).toFixed(0)} µs per round trip · load average at the end ${loadavg()[0]!.toFixed(2)}\n`);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2]) || undefined);
