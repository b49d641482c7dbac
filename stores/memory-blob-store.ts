import type { ArtifactRef, BlobStore } from './blob-store.js';
import { artifactRef, blake3Hex, blobBytes, refDigest } from './blob-hash.js';
import { BlobError } from './store-errors.js';

/** Content-addressed blobs held in memory (copies, so callers cannot alter stored bytes). */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, Uint8Array>();

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

  /** Test hook: flips one bit of a stored blob so `get` must report `BLOB_CORRUPT`. Never use outside tests. */
  corruptBlobForTesting(ref: ArtifactRef): void {
    const stored = this.#blobs.get(refDigest(ref));
    if (stored === undefined) throw new BlobError('BLOB_NOT_FOUND', ref);
    if (stored.length === 0) this.#blobs.set(refDigest(ref), Uint8Array.of(0));
    else stored[0] = stored[0]! ^ 0x01;
  }
}
