/** A reference to content in the blob store: `artifact://blake3/<64 hex>`. */
export type ArtifactRef = `artifact://${string}`;

/**
 * Content-addressed storage for large payloads (tool output, file contents, model inputs).
 * `put` is idempotent: the same bytes always give the same ref. `get` verifies the content hash and raises
 * `BLOB_CORRUPT` rather than returning altered bytes, and `BLOB_NOT_FOUND` for an unknown ref.
 */
export interface BlobStore {
  put(content: Uint8Array | string): Promise<ArtifactRef>;
  get(ref: ArtifactRef): Promise<Uint8Array>;
  has(ref: ArtifactRef): Promise<boolean>;
}
