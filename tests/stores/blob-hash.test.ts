import { describe, expect, it } from 'vitest';
import { blake3Hex, blobBytes, hashBlob, namedDigestOf } from '../../stores/blob-hash.js';
import { prepareStreamBlobs } from '../../stores/stream-blobs.js';

describe('naming a blob once', () => {
  it('hashBlob gives the BLAKE3 of the UTF-8 bytes and remembers it for exactly that array', async () => {
    const { bytes, hex } = await hashBlob('{"messages":[]}');
    expect(hex).toBe(await blake3Hex(blobBytes('{"messages":[]}')));
    expect(namedDigestOf(bytes)).toBe(hex);
    // Equal bytes in another array were not named: they are hashed as any blob is.
    expect(namedDigestOf(blobBytes('{"messages":[]}'))).toBeUndefined();
  });

  it('an append of a named blob carries the digest it was named by, and duplicates still collapse', async () => {
    const { bytes, hex } = await hashBlob('model input');
    const prepared = await prepareStreamBlobs([bytes, 'model input', 'other']);
    expect(prepared.map((blob) => blob.hex)).toEqual([hex, await blake3Hex(blobBytes('other'))]);
  });
});
