import { performance } from 'node:perf_hooks';
import type { RecordEnvelope } from '../../models/envelope.js';
import { randomChainKey } from '../../stores/chain-crypto.js';
import { canonicalRecordBytes } from '../../stores/chain-canon.js';
import { CHAIN_ORIGIN, chainFields } from '../../stores/chain.js';
import { median } from './bench-support.js';

/**
 * The chain's own work on `records` (README: *The chain*), timed alone: each record's canonical bytes, its digest and
 * its MAC, batch after batch as an append computes them (`batchSize` records per append). Resolves with µs of CPU per
 * record, the median of `rounds` rounds after a warm-up. What the chain adds to an append or a step is this.
 */
export const chainMicrosPerRecord = async (records: readonly RecordEnvelope[], options: { batchSize?: number; rounds?: number } = {}): Promise<number> => {
  const key = await randomChainKey();
  const batchSize = options.batchSize ?? 5;
  const batches: RecordEnvelope[][] = [];
  for (let start = 0; start < records.length; start += batchSize) batches.push(records.slice(start, start + batchSize));
  const round = (): number => {
    const started = performance.now();
    let predecessor: Uint8Array = CHAIN_ORIGIN;
    for (const batch of batches) predecessor = chainFields(key, predecessor, batch, batch.map(canonicalRecordBytes)).next;
    return ((performance.now() - started) * 1000) / Math.max(1, records.length);
  };
  round();
  return median(Array.from({ length: options.rounds ?? 5 }, round));
};
