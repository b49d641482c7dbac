/*
 * The ledger sizes of a `context.projected` record, without its schema: light (no zod), so the reading commands
 * (`rein sessions`, `rein show`: the trace view) can count without loading the runtime.
 */

/** The fields of a `context.projected` ledger these helpers read (either version). */
interface LedgerSizes {
  excluded?: readonly { count: number }[];
  compacted?: readonly unknown[];
  excludedCount?: number;
  compactedCount?: number;
}

/** True for a version-2 ledger, which holds only the memory decisions of its lists (and their sizes). */
export const isPartialLedger = (projected: Pick<LedgerSizes, 'excludedCount'>): boolean => projected.excludedCount !== undefined;

/** The ledger's sizes, from either version: candidates left out, compactions made. */
export const contextCounts = (projected: LedgerSizes): { excluded: number; compacted: number } => ({
  excluded: projected.excludedCount ?? (projected.excluded ?? []).reduce((sum, entry) => sum + entry.count, 0),
  compacted: projected.compactedCount ?? (projected.compacted ?? []).length,
});
