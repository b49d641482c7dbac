import type { RecordEnvelope } from '../../models/envelope.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import { CHAIN_ORIGIN, chainFields } from '../../stores/chain.js';
import { canonicalRecordBytes } from '../../stores/chain-canon.js';
import { median } from './bench-support.js';

/**
 * The chain's own work on `records` (docs/architecture.md: *The chain*), timed alone: each record's canonical bytes, its digest and
 * its MAC, batch after batch as an append computes them (`batchSize` records per append). Resolves with µs of CPU per
 * record, the median of `rounds` rounds after a warm-up. What the chain adds to an append or a step is this: with
 * `encoded`, as the in-memory and PostgreSQL stores chain (the canonical bytes are the compact ones they encode anyway),
 * else as LevelDB does (one more encoding of each row, its groups being packed differently).
 */
export const chainMicrosPerRecord = async (records: readonly RecordEnvelope[], options: { batchSize?: number; rounds?: number; encoded?: boolean } = {}): Promise<number> => {
  const key = await randomChainKey();
  const batchSize = options.batchSize ?? 5;
  const batches: RecordEnvelope[][] = [];
  for (let start = 0; start < records.length; start += batchSize) batches.push(records.slice(start, start + batchSize));
  // The in-memory and PostgreSQL stores digest the compact bytes they encode anyway: given here, outside the timing.
  const canonicals = options.encoded ? batches.map((batch) => batch.map(canonicalRecordBytes)) : undefined;
  // CPU time (user + system), as step.bench measures a round trip: on a busy machine wall time counts other processes.
  const round = (): number => {
    const started = process.cpuUsage();
    let predecessor: Uint8Array = CHAIN_ORIGIN;
    batches.forEach((batch, index) => {
      predecessor = chainFields(key, predecessor, batch, canonicals?.[index]).next;
    });
    const used = process.cpuUsage(started);
    return (used.user + used.system) / Math.max(1, records.length);
  };
  round();
  return median(Array.from({ length: options.rounds ?? 5 }, round));
};
