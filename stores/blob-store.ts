/** A reference to content in the blob store: `artifact://blake3/<64 hex>`. */
export type ArtifactRef = `artifact://${string}`;

/**
 * Content-addressed storage for large payloads (tool output, file contents, model inputs).
 * `put` is idempotent: the same bytes always give the same ref. `get` verifies the content hash and raises
 * `BLOB_CORRUPT` rather than returning altered bytes, and `BLOB_NOT_FOUND` for an unknown ref.
 */
export interface BlobStore {
  /**
   * Store bytes; resolves once they are readable (and, unless `durable: false`, on stable storage). Pass
   * `durable: false` for content the log can re-derive (a model input), where a loss after an OS crash is tolerable.
   */
  put(content: Uint8Array | string, options?: { durable?: boolean }): Promise<ArtifactRef>;
  get(ref: ArtifactRef): Promise<Uint8Array>;
  has(ref: ArtifactRef): Promise<boolean>;
}
