import type { ArtifactRef, BlobStore } from '../blob-store.js';
import { artifactRef, blake3Hex, blobBytes, refDigest } from '../blob-hash.js';
import { BlobError } from '../store-errors.js';
import type { PostgresQueries } from './postgres-queries.js';

/** Content-addressed blobs in the `<schema>.blobs` table, verified against their BLAKE3 on every read. */
export class PostgresBlobStore implements BlobStore {
  readonly #db: PostgresQueries;

  constructor(db: PostgresQueries) {
    this.#db = db;
  }

  async put(content: Uint8Array | string, _options?: { durable?: boolean }): Promise<ArtifactRef> {
    const bytes = blobBytes(content);
    const hex = await blake3Hex(bytes);
    await this.#db.query('blobs', (s) => `INSERT INTO ${s}.blobs (hash, content) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`, [hex, Buffer.from(bytes)]);
    return artifactRef(hex);
  }

  async get(ref: ArtifactRef): Promise<Uint8Array> {
    const hex = refDigest(ref);
    const { rows } = await this.#db.query<{ content: Buffer }>('blobs', (s) => `SELECT content FROM ${s}.blobs WHERE hash = $1`, [hex]);
    const stored = rows[0]?.content;
    if (stored === undefined) throw new BlobError('BLOB_NOT_FOUND', ref);
    if ((await blake3Hex(stored)) !== hex) throw new BlobError('BLOB_CORRUPT', ref);
    return new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength);
  }

  async has(ref: ArtifactRef): Promise<boolean> {
    const hex = refDigest(ref);
    const { rows } = await this.#db.query('blobs', (s) => `SELECT 1 FROM ${s}.blobs WHERE hash = $1`, [hex]);
    return rows.length > 0;
  }
}
