import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactRef, BlobStore } from './blob-store.js';
import { artifactRef, blake3Hex, blobBytes, refDigest } from './blob-hash.js';
import { BlobError } from './store-errors.js';
import { randomUuid } from './random-uuid.js';

/** Options of `FileBlobStore`. */
export interface FileBlobStoreOptions {
  /** The blobs directory (`<root>/blobs`). */
  directory: string;
  /** fsync each new blob file and its directory before `put` resolves. */
  sync: boolean;
}

/**
 * Content-addressed blobs as files `<directory>/<first 2 hex>/<64 hex>` named by the BLAKE3 of their bytes.
 * Files are written to a temp name and renamed, so a reader never sees a partial blob; `get` re-hashes and raises
 * `BLOB_CORRUPT` on a mismatch. Any process may read and write the directory concurrently.
 */
export class FileBlobStore implements BlobStore {
  readonly #directory: string;
  readonly #sync: boolean;

  constructor(options: FileBlobStoreOptions) {
    this.#directory = options.directory;
    this.#sync = options.sync;
  }

  /** The file that holds a blob (tests use it to damage one). */
  pathOf(ref: ArtifactRef): string {
    const digest = refDigest(ref);
    return join(this.#directory, digest.slice(0, 2), digest);
  }

  async put(content: Uint8Array | string, options: { durable?: boolean } = {}): Promise<ArtifactRef> {
    const sync = this.#sync && options.durable !== false;
    const bytes = blobBytes(content);
    const ref = artifactRef(await blake3Hex(bytes));
    const target = this.pathOf(ref);
    const folder = join(target, '..');
    if (!sync) {
      // Page cache only: a few synchronous calls cost far less than six thread-pool round trips on the step path.
      if (existsSync(target)) return ref;
      mkdirSync(folder, { recursive: true });
      const temporary = `${target}.${randomUuid()}.tmp`;
      try {
        writeFileSync(temporary, bytes, { flag: 'wx' });
        renameSync(temporary, target);
      } catch (error) {
        rmSync(temporary, { force: true });
        throw error;
      }
      return ref;
    }
    if (await exists(target)) return ref;
    await mkdir(folder, { recursive: true });
    const temporary = `${target}.${randomUuid()}.tmp`;
    try {
      const file = await open(temporary, 'wx');
      try {
        await file.writeFile(bytes);
        if (sync) await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    if (sync) await syncDirectory(folder);
    return ref;
  }

  async get(ref: ArtifactRef): Promise<Uint8Array> {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(this.pathOf(ref));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobError('BLOB_NOT_FOUND', ref, { cause: error });
      throw error;
    }
    if ((await blake3Hex(bytes)) !== refDigest(ref)) throw new BlobError('BLOB_CORRUPT', ref);
    return bytes;
  }

  async has(ref: ArtifactRef): Promise<boolean> {
    return exists(this.pathOf(ref));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function syncDirectory(path: string): Promise<void> {
  const folder = await open(path, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
