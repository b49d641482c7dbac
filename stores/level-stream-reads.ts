import type { RecordEnvelope } from '../models/envelope.js';
import type { StreamInfo } from './event-store.js';
import type { LevelStream } from './level-stream.js';

/*
 * Reads of an open LevelDB stream the store (stores/level-event-store.ts) builds its answers from: what `info` says
 * of a stream, the chain field a snapshot is tied to, and the pages `verifyChain` walks.
 */

/** The chain field of record `seq` (undefined for seq 0, a record past the head, or one written before the chain). */
export const fieldAt = async (opened: LevelStream, seq: number): Promise<Uint8Array | undefined> =>
  seq < 1 || seq > opened.head ? undefined : (await opened.readChained({ low: seq, high: seq, reverse: false }))[0]?.field;

/** A stream's records 1..head with their chain fields, page by page. */
export async function* chainedPages(opened: LevelStream): AsyncGenerator<Array<{ record: RecordEnvelope; field: Uint8Array | undefined }>> {
  const page = 1000;
  for (let low = 1; low <= opened.head; low += page) yield opened.readChained({ low, high: Math.min(opened.head, low + page - 1), reverse: false });
}

/** What `info` says of an open stream: its head, creation time, fork point and summary (undefined before its first write). */
export function describe(opened: LevelStream): StreamInfo | undefined {
  const meta = opened.meta;
  if (meta === undefined) return undefined;
  const info: StreamInfo = { stream: opened.stream, head: opened.head, createdAt: meta.createdAt };
  if (meta.forkedFrom !== undefined) info.forkedFrom = { ...meta.forkedFrom };
  if (opened.summary !== undefined) info.summary = opened.summary;
  return info;
}
