import { blake3Hex, blobBytes, namedDigestOf, refDigest } from './blob-hash.js';
import { BlobError } from './store-errors.js';

/** A blob ready to be written with a stream's batch: its BLAKE3 and its bytes. */
export interface StreamBlob {
  hex: string;
  bytes: Uint8Array;
}

/** Hash the blobs an append carries (strings are UTF-8), dropping duplicates; a blob `hashBlob` named is not hashed again. */
export const prepareStreamBlobs = async (blobs: ReadonlyArray<Uint8Array | string> | undefined): Promise<StreamBlob[]> => {
  if (!blobs || blobs.length === 0) return [];
  const prepared = new Map<string, StreamBlob>();
  for (const content of blobs) {
    const bytes = blobBytes(content);
    const hex = namedDigestOf(bytes) ?? (await blake3Hex(bytes));
    prepared.set(hex, { hex, bytes });
  }
  return [...prepared.values()];
};

/**
 * `prepareStreamBlobs` without awaiting, when every blob is already named (`hashBlob`, `PrefixBlobHasher`: a step's
 * model input) or there is none; undefined when one must be hashed (then await `prepareStreamBlobs`).
 */
export const preparedStreamBlobs = (blobs: ReadonlyArray<Uint8Array | string> | undefined): StreamBlob[] | undefined => {
  if (!blobs || blobs.length === 0) return [];
  if (blobs.length === 1) {
    const bytes = blobBytes(blobs[0]!);
    const hex = namedDigestOf(bytes);
    return hex === undefined ? undefined : [{ hex, bytes }];
  }
  const prepared = new Map<string, StreamBlob>();
  for (const content of blobs) {
    const bytes = blobBytes(content);
    const hex = namedDigestOf(bytes);
    if (hex === undefined) return undefined;
    prepared.set(hex, { hex, bytes });
  }
  return [...prepared.values()];
};

/** Check that stored bytes still hash to `ref`; `BLOB_CORRUPT` otherwise. */
export const verifiedBlob = async (ref: string, bytes: Uint8Array): Promise<Uint8Array> => {
  if ((await blake3Hex(bytes)) !== refDigest(ref)) throw new BlobError('BLOB_CORRUPT', ref);
  return bytes;
};
