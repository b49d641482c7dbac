import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClassicLevel } from 'classic-level';
import type { RecordDraft } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import type { LevelEventStore } from '../../stores/index.js';
import { recordKey } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { prepareBatch } from '../../stores/record-drafts.js';
import { chainMicrosPerRecord } from './chain-cost.js';
import { randomChainKey } from '../../stores/chain-crypto.js';

/**
 * Append throughput of the LevelDB EventStore against raw classic-level batches of the same encoded bytes (the
 * baseline skips validation, encoding, the head check and the queue). After one untimed warm-up round, rounds
 * interleave baseline and candidate (alternating which goes first),
 * with sync on and off, each on a fresh database whose first batch (which creates it) is not timed. Prints records/s
 * (median of rounds), memory, and last the ratios: the median of each round's EventStore / raw ratio, which cancels
 * the drift of a shared machine between rounds.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const BATCH_SIZE = Number(process.env.BENCH_BATCH ?? 10);
const BATCHES = { sync: Number(process.env.BENCH_SYNC_BATCHES ?? 200), relaxed: Number(process.env.BENCH_NOSYNC_BATCHES ?? 2000) };

type Mode = 'sync' | 'relaxed';

function sampleDraft(index: number): RecordDraft {
  return {
    id: `rec-${index.toString(36).padStart(8, '0')}`,
    type: index % 3 === 0 ? 'tool.settled' : 'actor.transitioned',
    v: 1,
    at: 1_700_000_000_000 + index,
    actor: 'root/child-2',
    corr: `call-${Math.floor(index / 4)}`,
    data: { tool: 'read', ok: index % 7 !== 0, path: `src/file-${index % 50}.ts`, lines: [index, index + 1], note: 'x'.repeat(80) },
  };
}

function makeBatches(count: number): RecordDraft[][] {
  return Array.from({ length: count }, (_, batch) => Array.from({ length: BATCH_SIZE }, (_, offset) => sampleDraft(batch * BATCH_SIZE + offset)));
}

async function timeRaw(directory: string, batches: RecordDraft[][], sync: boolean): Promise<number> {
  const encoded = batches.map((batch, index) => {
    const firstSeq = index * BATCH_SIZE + 1;
    return prepareBatch('raw', firstSeq, batch).values.map((value, offset) => ({ type: 'put' as const, key: recordKey(firstSeq + offset), value }));
  });
  const database = new ClassicLevel<string, Uint8Array>(directory, { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  const [first, ...rest] = encoded;
  await database.batch(first!, { sync });
  const started = performance.now();
  for (const operations of rest) await database.batch(operations, { sync });
  const elapsed = performance.now() - started;
  await database.close();
  return elapsed;
}

async function timeStore(store: LevelEventStore, stream: string, batches: RecordDraft[][], sync: boolean): Promise<number> {
  const [first, ...rest] = batches;
  await store.append(stream, first!, { expectedSeq: 0, sync });
  let head = first!.length;
  const started = performance.now();
  for (const batch of rest) {
    await store.append(stream, batch, { expectedSeq: head, sync });
    head += batch.length;
  }
  return performance.now() - started;
}

const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
const perSecond = (records: number, milliseconds: number): number => Math.round((records / milliseconds) * 1000);
const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Runs the benchmark and prints the figures; never asserts. */
export async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'rein-append-bench-'));
  const store = await openLevelEventStore(join(root, 'store'), { chainKey: await randomChainKey() });
  const results: Record<Mode, { raw: number[]; store: number[] }> = { sync: { raw: [], store: [] }, relaxed: { raw: [], store: [] } };
  try {
    for (let round = -1; round < ROUNDS; round++) {
      for (const mode of ['sync', 'relaxed'] as const) {
        const batches = makeBatches(BATCHES[mode]);
        const records = (batches.length - 1) * BATCH_SIZE;
        const sync = mode === 'sync';
        const record = (into: number[], milliseconds: number) => round >= 0 && into.push(perSecond(records, milliseconds));
        const runRaw = async () => record(results[mode].raw, await timeRaw(join(root, `raw-${mode}-${round + 1}`), batches, sync));
        const runStore = async () => record(results[mode].store, await timeStore(store, `store-${mode}-${round + 1}`, batches, sync));
        if (round % 2 === 0) {
          await runRaw();
          await runStore();
        } else {
          await runStore();
          await runRaw();
        }
      }
    }
  } finally {
    await store.close();
    await rm(root, { recursive: true, force: true });
  }
  // The chain's own work on the same records, timed alone (canonical bytes, digest, MAC; `BATCH_SIZE` per append).
  const chained = prepareBatch('chain', 1, makeBatches(BATCHES.relaxed).flat()).envelopes;
  const chainUs = await chainMicrosPerRecord(chained, { batchSize: BATCH_SIZE, rounds: ROUNDS });
  const memory = process.memoryUsage();
  console.log(`append benchmark: ${ROUNDS} interleaved rounds, ${BATCH_SIZE} records per batch`);
  for (const mode of ['sync', 'relaxed'] as const) {
    const label = mode === 'sync' ? 'sync on ' : 'sync off';
    console.log(`  ${label} raw classic-level batch: ${median(results[mode].raw)} records/s  (rounds: ${results[mode].raw.join(', ')})`);
    console.log(`  ${label} EventStore.append:       ${median(results[mode].store)} records/s  (rounds: ${results[mode].store.join(', ')})`);
  }
  console.log(`  memory: rss ${megabytes(memory.rss)}, heap used ${megabytes(memory.heapUsed)}`);
  for (const mode of ['sync', 'relaxed'] as const) {
    const ratio = median(results[mode].store.map((store, round) => store / results[mode].raw[round]!));
    console.log(`ratio EventStore / raw, sync ${mode === 'sync' ? 'on ' : 'off'}: ${(ratio * 100).toFixed(1)}% (target >= 70%)`);
  }
  // An append's time per record with the chain is 1e6 / records per second; the chain's share of it, same run.
  const appendUs = 1e6 / median(results.relaxed.store);
  console.log(`the chain: ${chainUs.toFixed(2)} µs of CPU per record (its own work, LevelDB's: one more encoding, digest, MAC) against ${appendUs.toFixed(2)} µs of wall time per appended record (sync off): ${((chainUs / appendUs) * 100).toFixed(1)}% of an append (step.bench gives its share of a round trip)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
