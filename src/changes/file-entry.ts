import { closeSync, openSync, readFileSync, readlinkSync, readSync, type Stats } from 'node:fs';
import type { IHasher } from 'hash-wasm';
import type { TreeEntry } from '../../models/workspace.records.js';
import { blake3Hex } from '../util/blake3.js';

/** What `lstat` said about a path when its entry was read: a change to any of it means the entry may have changed. */
export interface EntryMeta {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

export const metaOf = (stat: Stats): EntryMeta => ({ size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, mode: stat.mode });

export const sameMeta = (left: EntryMeta | undefined, right: EntryMeta): boolean =>
  left !== undefined && left.size === right.size && left.mtimeMs === right.mtimeMs && left.ctimeMs === right.ctimeMs && left.ino === right.ino && left.mode === right.mode;

/** A file changed this close (ms) to when it was read may change again within the same timestamp tick. */
const racyWindowMs = 50;

/**
 * Whether a meta read at `readAt` may not show the next change (git's "racy" entries): the file was modified within
 * the file system's timestamp granularity of being read, so a rewrite of the same size right after could leave size,
 * mtime and ctime as they were. Such an entry is read again next time rather than trusted.
 */
export const racyMeta = (meta: EntryMeta, readAt: number): boolean => Math.max(meta.mtimeMs, meta.ctimeMs) >= readAt - racyWindowMs;

/** An entry read from disk, with the bytes of a file small enough to store. */
export interface ReadEntry {
  entry: TreeEntry;
  bytes?: Uint8Array;
}

const chunkBytes = 1 << 20;

/**
 * Read the entry at `absolute` whose `lstat` is `stat`: a directory's mode, a symlink's target, a file's mode, size and
 * BLAKE3 (with its bytes when at most `maxFileBytes`; a larger file is hashed in 1 MiB chunks and marked
 * `unrestorable`). Undefined for anything else (a FIFO, a socket, a device) and for a path that vanished meanwhile;
 * other errors (`EACCES`: a file nobody may read) are thrown.
 */
export const readEntry = (absolute: string, stat: Stats, maxFileBytes: number, large: IHasher): ReadEntry | undefined => {
  try {
    if (stat.isDirectory()) return { entry: { type: 'dir', mode: stat.mode & 0o7777 } };
    if (stat.isSymbolicLink()) return { entry: { type: 'symlink', target: readlinkSync(absolute, 'utf8') } };
    if (!stat.isFile()) return undefined;
    const mode = stat.mode & 0o7777;
    if (stat.size <= maxFileBytes) {
      const bytes = readFileSync(absolute);
      // The file may have grown past the cap since its lstat: then it is a large file after all.
      if (bytes.length <= maxFileBytes) return { entry: { type: 'file', mode, size: bytes.length, content: `artifact://blake3/${blake3Hex(bytes)}` }, bytes };
    }
    const { digest, size } = hashLarge(absolute, large);
    return { entry: { type: 'file', mode, size, content: `artifact://blake3/${digest}`, unrestorable: true } };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP' || code === 'EINVAL') return undefined;
    throw error;
  }
};

const hashLarge = (absolute: string, hasher: IHasher): { digest: string; size: number } => {
  const descriptor = openSync(absolute, 'r');
  try {
    hasher.init();
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let size = 0;
    for (let read = readSync(descriptor, buffer, 0, chunkBytes, null); read > 0; read = readSync(descriptor, buffer, 0, chunkBytes, null)) {
      hasher.update(buffer.subarray(0, read));
      size += read;
    }
    return { digest: hasher.digest('hex'), size };
  } finally {
    closeSync(descriptor);
  }
};
