import type { RecordEnvelope } from '../models/envelope.js';
import type { ReadOptions } from './event-store.js';
import { CorruptRecordError, StoreError } from './store-errors.js';

/** The exact seqs a read returns: `low..high` inclusive, ascending or descending. */
export interface SeqRange {
  low: number;
  high: number;
  reverse: boolean;
}

function checkBound(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `read option ${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/**
 * Resolves read options against the head: `from`/`to` are inclusive (from defaults to 1, to to the head), `limit`
 * counts from the start of the direction (the lowest seqs forwards, the highest in reverse).
 * Returns `undefined` when the read is empty (limit 0, from > to, or past the head).
 */
export function resolveReadRange(options: ReadOptions | undefined, head: number): SeqRange | undefined {
  checkBound('from', options?.from);
  checkBound('to', options?.to);
  checkBound('limit', options?.limit);
  const from = Math.max(options?.from ?? 1, 1);
  const to = Math.min(options?.to ?? head, head);
  const limit = options?.limit ?? Number.POSITIVE_INFINITY;
  const reverse = options?.reverse === true;
  if (limit === 0 || from > to) return undefined;
  if (reverse) return { low: Math.max(from, to - limit + 1), high: to, reverse };
  return { low: from, high: Math.min(to, from + limit - 1), reverse };
}

/** The number of records a resolved range holds. */
export function rangeLength(range: SeqRange): number {
  return range.high - range.low + 1;
}

/** The seq the `index`-th record of a range must carry. */
export function seqAt(range: SeqRange, index: number): number {
  return range.reverse ? range.high - index : range.low + index;
}

/**
 * Checks that a decoded record sits where the range says it must (right stream, right seq).
 * A mismatch means a record went missing or was stored under the wrong key: `CorruptRecordError`.
 */
export function verifyPosition(stream: string, record: RecordEnvelope, expectedSeq: number): void {
  if (record.seq !== expectedSeq || record.stream !== stream) {
    throw new CorruptRecordError(stream, expectedSeq, `expected seq ${expectedSeq} but found ${String(record.seq)} of ${String(record.stream)}`);
  }
}
