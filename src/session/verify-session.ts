import type { EventStore } from '../../stores/event-store.js';
import { assertAuthenticated, type ChainReport } from '../../stores/chain-check.js';
import { ReinError } from '../host/host-errors.js';

/**
 * Check a stream's chain without interpreting a record (`rein verify`, and the first thing `rein replay`, `rein
 * resume` and `rein store copy` do): resolves the report when every record is covered and this machine's key wrote the
 * chain; otherwise rejects with `ChainError` naming the first record concerned — `CHAIN_BROKEN` (a record changed,
 * inserted, deleted or moved, the stream cut short) or `CHAIN_UNAUTHENTICATED` (intact,
 * but written under another key, rewritten without the key, or written before the chain). `SESSION_NOT_FOUND` for a
 * stream the store does not hold; `STORE_CORRUPT_RECORD` for a record that cannot be read (damaged storage). With `allowUnchained`, a log written before the chain resolves too (its report says
 * `unchained`): the caller's append starts its chain.
 */
export const verifyStreamChain = async (store: EventStore, stream: string, options: { allowUnchained?: boolean } = {}): Promise<ChainReport> => {
  // A record that cannot be read (damaged storage) stays `STORE_CORRUPT_RECORD`: found, never vouched for.
  const report = await store.verifyChain(stream);
  if (report.head === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${stream} in this store`);
  if (report.status === 'unchained' && options.allowUnchained) return report;
  assertAuthenticated(report);
  return report;
};

/** One line saying what the chain vouches for (`rein verify`, `rein replay`). */
export const describeChain = (report: ChainReport): string => {
  if (report.status === 'unchained') return `not chained: ${report.problem ?? ''} (rein resume of a session that can go on, or rein store copy --adopt into another store)`;
  const covered = report.chainedFrom !== undefined && report.chainedFrom > 1 ? `; records 1..${report.chainedFrom - 1} were written before the chain and are covered from record ${report.chainedFrom}, where it starts` : '';
  const sealed = report.sealedHead === undefined ? '; no seal (the stream was not closed cleanly since it was chained), so records cut off its end would go unnoticed' : report.sealedHead === report.head ? `; sealed at ${report.sealedHead}` : `; sealed at ${report.sealedHead} (a clean close; the records after it were appended since)`;
  return `chain intact and authenticated by this machine's key (${report.keyId ?? 'none'}): records 1..${report.head}${covered}${sealed}`;
};
