import type { AppendOptions, StoredSnapshot } from './event-store.js';
import { StoreError } from './store-errors.js';

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** `expectedSeq` must be a non-negative integer, else `STORE_INVALID_ARGUMENT`. */
export function assertExpectedSeq(expectedSeq: unknown): asserts expectedSeq is number {
  if (!isCount(expectedSeq)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `expectedSeq must be a non-negative integer, got ${String(expectedSeq)}`);
  }
}

/** A fork point must satisfy `0 < atSeq <= head`, else `STORE_INVALID_ARGUMENT`. */
export function assertForkPoint(stream: string, atSeq: unknown, head: number): asserts atSeq is number {
  if (!isCount(atSeq) || atSeq < 1 || atSeq > head) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `cannot fork ${stream} at ${String(atSeq)}: its head is ${head}`);
  }
}

/** A snapshot needs `1 <= seq <= head`, a string version and a numeric `at`, else `STORE_INVALID_ARGUMENT`. */
export function assertSnapshot(snapshot: StoredSnapshot, head: number): void {
  const valid =
    typeof snapshot === 'object' &&
    snapshot !== null &&
    isCount(snapshot.seq) &&
    snapshot.seq >= 1 &&
    snapshot.seq <= head &&
    typeof snapshot.version === 'string' &&
    typeof snapshot.at === 'number';
  if (!valid) throw new StoreError('STORE_INVALID_ARGUMENT', `invalid snapshot for a stream whose head is ${head}`);
}

/** `atOrBefore`, when given, must be a non-negative integer. */
export function assertSnapshotBound(atOrBefore: unknown): void {
  if (atOrBefore !== undefined && !isCount(atOrBefore)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `atOrBefore must be a non-negative integer, got ${String(atOrBefore)}`);
  }
}

/** Stores without leases refuse a fenced append: `STORE_INVALID_ARGUMENT`. */
export function refuseFence(options: AppendOptions | undefined): void {
  if (options?.fence !== undefined) throw new StoreError('STORE_INVALID_ARGUMENT', 'this store has no leases: an append cannot carry a fence');
}
