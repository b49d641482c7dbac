import type { ArtifactRef, BlobStore } from './blob-store.js';
import { artifactRef, blake3Hex, blobBytes, refDigest } from './blob-hash.js';
import { BlobError } from './store-errors.js';

/** Content-addressed blobs held in memory (copies, so callers cannot alter stored bytes). */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs: Map<string, Uint8Array>;

  /** `blobs`: where the bytes live, by BLAKE3 hex (a `MemoryStorage`'s, or a fresh map). */
  constructor(blobs: Map<string, Uint8Array> = new Map()) {
    this.#blobs = blobs;
  }

  async put(content: Uint8Array | string, _options?: { durable?: boolean }): Promise<ArtifactRef> {
    const bytes = blobBytes(content);
    const digest = await blake3Hex(bytes);
    if (!this.#blobs.has(digest)) this.#blobs.set(digest, Uint8Array.from(bytes));
    return artifactRef(digest);
  }

  async get(ref: ArtifactRef): Promise<Uint8Array> {
    const digest = refDigest(ref);
    const stored = this.#blobs.get(digest);
    if (stored === undefined) throw new BlobError('BLOB_NOT_FOUND', ref);
    if ((await blake3Hex(stored)) !== digest) throw new BlobError('BLOB_CORRUPT', ref);
    return Uint8Array.from(stored);
  }

  async has(ref: ArtifactRef): Promise<boolean> {
    return this.#blobs.has(refDigest(ref));
  }

}
