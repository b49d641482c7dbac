import { constants } from 'node:fs';
import { access, copyFile, link, mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { isStreamName } from '../models/envelope-rules.js';
import { WATERMARK_FILE } from './level-stream-integrity.js';
import { readManifestTables } from './level-manifest.js';

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

/** Live tables of at least this many bytes are hard-linked rather than copied (when the store's filesystem allows). */
const LINK_THRESHOLD = 4 * 1024 * 1024;

/** Name prefix of every copy: the owner's pid follows, so a later process can delete the copies of one that was killed. */
const COPY_PREFIX = 'rein-stream-copy-';

/** The folder inside a store root that holds its linked copies when the temp directory is on another filesystem. */
export const READ_COPIES_DIRECTORY = '.read-copies';

/**
 * Makes a consistent private copy of a LevelDB database that another process may be writing, skipping its `LOCK` and
 * info logs, and returns the copy's path; the caller removes it with `removeCopy`. `CURRENT` is read once and the
 * other files follow in `copyRank` order, which keeps the copy consistent; a file that vanishes mid-copy (compaction)
 * rejects with `ENOENT` and the caller retries. The source is only ever read (or hard-linked).
 *
 * A small database is copied whole into `/dev/shm` when there is one (see `copyPlaces`), where LevelDB's fsyncs while
 * it opens the copy cost nothing. A database whose live tables reach `LINK_THRESHOLD` is copied at a bounded cost:
 * its tables — immutable in LevelDB — are hard-linked into a folder on the same filesystem and only the watermark,
 * manifest and logs are copied (see `linkedCopy`); where linking is impossible it is copied whole.
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
  await cleanStaleCopies([...places, storeCopiesOf(directory)]);
  const linked = await linkedCopy(directory, current, names);
  if (linked !== undefined) return linked;
  for (const [index, place] of places.entries()) {
    const copy = await mkdtemp(join(place, `${COPY_PREFIX}${process.pid}-`));
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

const TABLE = /^(\d+)\.(ldb|sst)$/;

/** Errors that say a hard link cannot be made here (another filesystem, no permission, no support): copy instead. */
const CANNOT_LINK = new Set(['EXDEV', 'EPERM', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'EROFS', 'ENOSPC']);

/**
 * The bounded copy: watermark, manifest and logs copied, and exactly the tables the copied manifest lists as live
 * hard-linked. Each linked table's number is below the manifest's next file number, so LevelDB opening the copy never
 * creates (truncates) a file of that name: the shared files are only read. `undefined` when the live tables are too
 * small to be worth it, the manifest cannot be read with certainty, or no folder on the store's filesystem takes
 * hard links — the caller then copies whole.
 */
async function linkedCopy(directory: string, current: string, names: readonly string[]): Promise<string | undefined> {
  let tableBytes = 0;
  for (const name of names.filter((entry) => TABLE.test(entry))) tableBytes += (await stat(join(directory, name)).catch(() => undefined))?.size ?? 0;
  if (tableBytes < LINK_THRESHOLD) return undefined;
  const place = await linkPlace(directory);
  if (place === undefined) return undefined;
  const copy = await mkdtemp(join(place, `${COPY_PREFIX}${process.pid}-`));
  try {
    await writeFile(join(copy, 'CURRENT'), current);
    for (const name of names.filter((entry) => !TABLE.test(entry))) await copyFile(join(directory, name), join(copy, name));
    const tables = readManifestTables(await readFile(join(copy, current.trim())));
    if (tables === undefined) {
      await removeCopy(copy);
      return undefined;
    }
    for (const number of tables.live) await linkTable(directory, copy, number);
    return copy;
  } catch (error) {
    await removeCopy(copy);
    if (CANNOT_LINK.has((error as NodeJS.ErrnoException).code ?? '')) {
      unlinkable.add(place);
      return undefined;
    }
    throw error;
  }
}

/** Hard-links table `number` (`.ldb`, or `.sst` as older LevelDB named them) into the copy; `ENOENT` when compacted away. */
async function linkTable(directory: string, copy: string, number: number): Promise<void> {
  const stem = String(number).padStart(6, '0');
  try {
    await link(join(directory, `${stem}.ldb`), join(copy, `${stem}.ldb`));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await link(join(directory, `${stem}.sst`), join(copy, `${stem}.sst`));
  }
}

/** Folders found unable to take hard links in this process. */
const unlinkable = new Set<string>();

/**
 * A folder on the same filesystem as `directory` (a stream's database under `<root>/streams/`) for a linked copy:
 * the temp directory when it is on that filesystem, else `<root>/.read-copies` (created on demand and removed with
 * the last copy in it); `undefined` when neither can be used.
 */
async function linkPlace(directory: string): Promise<string | undefined> {
  const device = (await stat(directory)).dev;
  const temporary = tmpdir();
  const candidates: string[] = [];
  if ((await stat(temporary).catch(() => undefined))?.dev === device) candidates.push(temporary);
  candidates.push(storeCopiesOf(directory));
  for (const candidate of candidates.filter((entry) => !unlinkable.has(entry))) {
    if (candidate === temporary || (await mkdir(candidate, { recursive: true }).then(() => true, () => false))) return candidate;
  }
  return undefined;
}

/** `<root>/.read-copies` of the store whose stream database is `directory` (`<root>/streams/<stream>`). */
const storeCopiesOf = (directory: string): string => join(dirname(dirname(directory)), READ_COPIES_DIRECTORY);

const cleaned = new Map<string, Promise<void>>();

/**
 * Deletes the copies a killed process left in `places` (once per place and process): a copy's name carries its
 * owner's pid, and a copy whose owner no longer runs is stale. Copies of live processes are left alone.
 */
export async function cleanStaleCopies(places: readonly string[]): Promise<void> {
  await Promise.all(
    places.map((place) => {
      let cleaning = cleaned.get(place);
      if (cleaning === undefined) {
        cleaning = removeDeadOwners(place);
        cleaned.set(place, cleaning);
      }
      return cleaning;
    }),
  );
}

const removeDeadOwners = async (place: string): Promise<void> => {
  const names = await readdir(place).catch(() => [] as string[]);
  for (const name of names) {
    const owner = new RegExp(`^${COPY_PREFIX}(\\d+)-`).exec(name);
    if (owner === null || Number(owner[1]) === process.pid || isRunning(Number(owner[1]))) continue;
    await rm(join(place, name), { recursive: true, force: true }).catch(() => undefined);
  }
};

/** Whether a process with this pid exists (one of another user counts). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

let memoryDirectory: Promise<string | undefined> | undefined;

/**
 * Where whole copies go: `/dev/shm` first when it is a writable directory (a memory filesystem, where LevelDB's
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

/** Deletes a copy made by `copyDatabase` (and the store's `.read-copies` folder once it holds no copy). */
export async function removeCopy(copy: string): Promise<void> {
  await rm(copy, { recursive: true, force: true });
  const parent = dirname(copy);
  if (basename(parent) === READ_COPIES_DIRECTORY) await rmdir(parent).catch(() => undefined);
}
