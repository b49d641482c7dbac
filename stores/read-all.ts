import type { EventStore, PositionedRecord, ReadAllOptions } from './event-store.js';
import { StoreError } from './store-errors.js';

/** How many records `readAll` returns when no limit is given. */
export const DEFAULT_READ_ALL_LIMIT = 1000;

/** Checks `readAll`'s limit (a non-negative integer) and returns it with the default applied. */
export function readAllLimit(options: ReadAllOptions | undefined): number {
  const limit = options?.limit ?? DEFAULT_READ_ALL_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 0) throw new StoreError('STORE_INVALID_ARGUMENT', `readAll limit must be a non-negative integer, got ${String(limit)}`);
  return limit;
}

function invalidPosition(position: unknown): StoreError {
  return new StoreError('STORE_INVALID_ARGUMENT', `not a position of this store: ${JSON.stringify(position)}`);
}

/** A position of the per-stream walk: the stream's creation time and name, and the seq. */
type WalkPosition = [createdAt: number, stream: string, seq: number];

function parseWalkPosition(position: unknown): WalkPosition | undefined {
  if (position === undefined) return undefined;
  if (typeof position !== 'string') throw invalidPosition(position);
  let parsed: unknown;
  try {
    parsed = JSON.parse(position);
  } catch {
    throw invalidPosition(position);
  }
  const valid = Array.isArray(parsed) && parsed.length === 3 && typeof parsed[0] === 'number' && typeof parsed[1] === 'string' && Number.isSafeInteger(parsed[2]);
  if (!valid) throw invalidPosition(position);
  return parsed as WalkPosition;
}

const before = (left: [number, string], right: [number, string]): boolean => left[0] < right[0] || (left[0] === right[0] && left[1] < right[1]);

/**
 * `readAll` for stores without a global order (`capabilities.globalOrder` false): walk the streams in creation order
 * (then name), each stream's records in seq order. Positions are `[createdAt, stream, seq]` as JSON. Costs one
 * `streams()` per call plus one read per stream visited.
 */
export async function readAllByStream(store: EventStore, options: ReadAllOptions | undefined): Promise<PositionedRecord[]> {
  const limit = readAllLimit(options);
  const after = parseWalkPosition(options?.after);
  if (limit === 0) return [];
  const streams = await store.streams();
  const page: PositionedRecord[] = [];
  for (const info of streams) {
    const key: [number, string] = [info.createdAt, info.stream];
    if (after && before(key, [after[0], after[1]])) continue;
    const from = after && key[0] === after[0] && key[1] === after[1] ? after[2] + 1 : 1;
    if (from > info.head) continue;
    const records = await store.read(info.stream, { from, limit: limit - page.length });
    for (const record of records) page.push({ position: JSON.stringify([info.createdAt, info.stream, record.seq]), record });
    if (page.length >= limit) break;
  }
  return page;
}

/** Parses a position of a store whose global order is a plain counter (the in-memory store). */
export function parseCounterPosition(position: unknown): number {
  if (position === undefined) return 0;
  if (typeof position !== 'string' || !/^\d{1,15}$/.test(position)) throw invalidPosition(position);
  return Number(position);
}
