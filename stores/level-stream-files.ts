import { constants } from 'node:fs';
import { access, copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStreamName } from '../models/envelope-rules.js';
import { WATERMARK_FILE } from './level-stream-integrity.js';

/**
 * Directory layout of the LevelDB store: `<root>/streams/<stream>/` is one LevelDB database per stream, so another
 * process can own one session's database while this one owns another's; `<root>/blobs/` holds the blob files.
 */
export function streamsDirectory(root: string): string {
  return join(root, 'streams');
}

/** `<root>/streams/<stream>`: the stream's LevelDB directory. */
export function streamDirectory(root: string, stream: string): string {
  return join(streamsDirectory(root), stream);
}

/** True when `directory` holds a LevelDB database (its `CURRENT` file exists). Never creates anything. */
export async function databaseExists(directory: string): Promise<boolean> {
  try {
    return (await stat(join(directory, 'CURRENT'))).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether a stream directory without a CURRENT file still holds stream data: rein's watermark (written on a clean
 * close), or a non-empty LevelDB log or table file. A database being created has neither yet.
 */
export async function holdsData(directory: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return false;
  }
  if (names.includes('rein-watermark.json')) return true;
  for (const name of names.filter((entry) => entry.endsWith('.log') || entry.endsWith('.ldb'))) {
    if ((await stat(join(directory, name)).catch(() => undefined))?.size) return true;
  }
  return false;
}

/** Names of the stream directories under `<root>/streams`, sorted; invalid names are ignored. */
export async function listStreamNames(root: string): Promise<string[]> {
  try {
    const entries = await readdir(streamsDirectory(root), { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() && isStreamName(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * Copy order that keeps a copy consistent while its owner writes and compacts: the watermark first (heads only grow,
 * so it never claims more than the data copied after it), then the manifest, the logs, and the tables.
 */
function copyRank(name: string): number {
  if (name === WATERMARK_FILE) return 0;
  if (name.startsWith('MANIFEST-')) return 1;
  if (name.endsWith('.log')) return 2;
  return 3;
}

const SKIPPED = new Set(['CURRENT', 'LOCK', 'LOG', 'LOG.old']);

/**
 * Copies a LevelDB database that another process may be writing into a fresh temp directory (in `/dev/shm` when there
 * is one: see `copyPlaces`), skipping its `LOCK`
 * and info logs, and returns the copy's path. `CURRENT` is read once and the other files follow in `copyRank` order,
 * which keeps the copy consistent; a file that vanishes mid-copy (compaction) rejects with `ENOENT` and the caller
 * retries. The caller removes the copy with `removeCopy`.
 */
export async function copyDatabase(directory: string): Promise<string> {
  const current = await readFile(join(directory, 'CURRENT'), 'utf8');
  const manifest = current.trim();
  const names = (await readdir(directory)).filter((name) => !SKIPPED.has(name) && !/\.(db)?tmp$/.test(name));
  if (!names.includes(manifest)) {
    throw Object.assign(new Error(`manifest ${manifest} appeared after the listing`), { code: 'ENOENT' });
  }
  names.sort((left, right) => copyRank(left) - copyRank(right));
  const places = await copyPlaces();
  for (const [index, place] of places.entries()) {
    const copy = await mkdtemp(join(place, 'rein-stream-copy-'));
    try {
      await writeFile(join(copy, 'CURRENT'), current);
      for (const name of names) await copyFile(join(directory, name), join(copy, name));
      return copy;
    } catch (error) {
      await removeCopy(copy);
      // A full memory filesystem: the copy goes to the temp directory instead.
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC' || index === places.length - 1) throw error;
    }
  }
  throw new Error('no place for a copy');
}

let memoryDirectory: Promise<string | undefined> | undefined;

/**
 * Where throwaway copies go: `/dev/shm` first when it is a writable directory (a memory filesystem, where LevelDB's
 * fsyncs while it opens the copy cost nothing: opening a copy there is several times faster), then the temp directory.
 */
async function copyPlaces(): Promise<string[]> {
  memoryDirectory ??= access('/dev/shm', constants.W_OK).then(
    async () => ((await stat('/dev/shm')).isDirectory() ? '/dev/shm' : undefined),
    () => undefined,
  );
  const memory = await memoryDirectory;
  return memory === undefined ? [tmpdir()] : [memory, tmpdir()];
}

/** Deletes a copy made by `copyDatabase`. */
export async function removeCopy(copy: string): Promise<void> {
  await rm(copy, { recursive: true, force: true });
}
