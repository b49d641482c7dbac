/*
 * How an append's blobs are written into a `/3` stream database: whole, or as a delta against the blob appended
 * before it. Split from level-event-store.ts (issue 31).
 */
import { blobKey, deltaKey } from './level-keys.js';
import { MAX_DELTA_DEPTH, deltaOf, encodeBlobDelta } from './blob-deltas.js';
import type { StreamBlob } from './stream-blobs.js';
import type { LevelStream, StreamWrite } from './level-stream.js';

/** The write that stores `blob` whole. */
export const wholeBlob = (blob: StreamBlob): StreamWrite => ({ type: 'put', key: blobKey(blob.hex), value: blob.bytes });

/**
 * The writes that store an append's blobs in a `/3` stream: each as a delta against the blob appended before it
 * (blob-deltas.ts) when that saves enough and the chain is not yet `MAX_DELTA_DEPTH` long, otherwise whole; and the
 * base the next append starts from. A blob the stream already holds is not written again, so a stored blob is never
 * overwritten and every delta's base was written before it: no chain can loop.
 */
export async function blobWrites(target: LevelStream, blobs: readonly StreamBlob[]): Promise<{ writes: StreamWrite[]; last: LevelStream['lastBlob'] }> {
  let last = target.lastBlob;
  if (blobs.length === 0) return { writes: [], last };
  const stored = await target.storedBlobs(blobs.map((blob) => blob.hex));
  const writes: StreamWrite[] = [];
  for (const blob of blobs) {
    if (stored.has(blob.hex)) continue;
    stored.add(blob.hex);
    const delta = last !== undefined && last.depth < MAX_DELTA_DEPTH ? deltaOf(last.bytes, blob.bytes) : undefined;
    if (delta !== undefined && last !== undefined) {
      writes.push({ type: 'put', key: deltaKey(blob.hex), value: encodeBlobDelta(last.hex, delta) });
      last = { hex: blob.hex, bytes: blob.bytes, depth: last.depth + 1 };
    } else {
      writes.push(wholeBlob(blob));
      last = { hex: blob.hex, bytes: blob.bytes, depth: 0 };
    }
  }
  return { writes, last };
}
