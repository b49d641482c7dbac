/*
 * Reading a blob back from a stream database: whole, or rebuilt through its chain of deltas (blob-deltas.ts), and
 * checked against its BLAKE3. Split from level-stream.ts (issue 31).
 */
import { blobKey, deltaKey } from './level-keys.js';
import { MAX_DELTA_DEPTH, applyDelta, decodeBlobDelta } from './blob-deltas.js';
import { blake3Hex } from './blob-hash.js';

/**
 * A stream blob's bytes, rebuilt through its chain of deltas and checked against its BLAKE3: `'missing'` when the
 * stream holds no such blob, `'damaged'` when it does but the bytes (or a link of the chain) are gone or altered.
 */
export async function readStreamBlob(hex: string, stream: string, getMany: (keys: string[]) => Promise<Array<Uint8Array | undefined>>): Promise<Uint8Array | 'missing' | 'damaged'> {
  const deltas: Array<{ delta: Uint8Array; prefix?: number }> = [];
  let current = hex;
  let bytes: Uint8Array;
  for (;;) {
    const [whole, delta] = await getMany([blobKey(current), deltaKey(current)]);
    if (whole !== undefined) {
      bytes = whole;
      break;
    }
    if (delta === undefined) return deltas.length === 0 ? 'missing' : 'damaged';
    // No chain this store writes is longer: a longer one is damage (or a loop), not something to follow.
    if (deltas.length >= MAX_DELTA_DEPTH) return 'damaged';
    try {
      const decoded = decodeBlobDelta(delta, stream);
      deltas.push(decoded);
      current = decoded.baseHex;
    } catch {
      return 'damaged';
    }
  }
  try {
    for (let index = deltas.length - 1; index >= 0; index--) bytes = applyDelta(bytes, deltas[index]!.delta, deltas[index]!.prefix);
  } catch {
    return 'damaged';
  }
  return (await blake3Hex(bytes)) === hex ? bytes : 'damaged';
}
