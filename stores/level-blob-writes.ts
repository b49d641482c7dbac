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
export async function blobWrites(target: LevelStream, blobs: readonly StreamBlob[]): Promise<BlobWrites> {
  return blobWritesNow(target, blobs) ?? blobWritesGiven(target, blobs, await target.storedBlobs(blobs.map((blob) => blob.hex)));
}

/** An append's blob writes and the base the next append starts from. */
export interface BlobWrites {
  writes: StreamWrite[];
  last: LevelStream['lastBlob'];
}

/**
 * `blobWrites` without an await when the stream's blob index tells alone which blobs it holds (none of these: a step's
 * new model input) or there is none; undefined otherwise (then await `blobWrites`).
 */
export function blobWritesNow(target: LevelStream, blobs: readonly StreamBlob[]): BlobWrites | undefined {
  if (blobs.length === 0) return { writes: [], last: target.lastBlob };
  const stored = target.storedBlobsNow(blobs.length === 1 ? [blobs[0]!.hex] : blobs.map((blob) => blob.hex));
  return stored === undefined ? undefined : blobWritesGiven(target, blobs, stored);
}

/** The writes of an append's blobs, given which of them the stream already stores (`stored`, added to). */
function blobWritesGiven(target: LevelStream, blobs: readonly StreamBlob[], stored: Set<string>): BlobWrites {
  let last = target.lastBlob;
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
