import { closeSync, constants, existsSync, openSync, readdir as readdirCallback, readlinkSync, type Dirent } from 'node:fs';
import { open, readdir, readlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether this system can name an open descriptor as a path (`/proc/self/fd/<n>`, Linux). */
export const descriptorPaths: boolean = existsSync('/proc/self/fd');

/**
 * A directory held open by descriptor after checking where it really is. `at(name)` names an entry of exactly
 * that directory (through `/proc/self/fd/<n>/<name>`, the user-space form of `openat`), so a directory or symlink
 * swapped in on the path after the check cannot redirect the operation elsewhere.
 */
export interface PinnedDirectory {
  readonly path: string;
  at(name: string): string;
  list(): Promise<Dirent[]>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Open the directory `expected` (a canonical path) without following a final symlink and check that the descriptor
 * points exactly there; undefined when it does not (something was swapped in) or it cannot be opened. Where
 * `/proc/self/fd` does not exist the directory is used by path (and the race is not closed).
 */
export const openPinnedDirectory = async (expected: string): Promise<PinnedDirectory | undefined> => {
  let handle: FileHandle;
  try {
    handle = await open(expected, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  if (!descriptorPaths) return pinned(handle, expected);
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => '');
  if (real !== expected) {
    await handle.close();
    return undefined;
  }
  return pinned(handle, `/proc/self/fd/${handle.fd}`);
};

const pinned = (handle: FileHandle, base: string): PinnedDirectory => ({
  path: base,
  at: (name) => join(base, name),
  list: () => readdir(base, { withFileTypes: true }),
  sync: () => handle.sync().catch(() => undefined),
  close: () => handle.close(),
});

/** List a directory by descriptor after checking its real path is `expected`; undefined when it moved or is gone. */
export const listPinned = async (expected: string): Promise<Dirent[] | undefined> => {
  const directory = await openPinnedDirectory(expected);
  if (!directory) return undefined;
  try {
    return await directory.list();
  } finally {
    await directory.close();
  }
};

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void;

/**
 * A `readdir` for directory walkers (tinyglobby's `fs` option) that lists each directory by descriptor after
 * checking its real path is the path asked for: a directory swapped for a symlink mid-walk is skipped (`ENOENT`),
 * never followed.
 */
export const pinnedReaddir = (path: string, _options: unknown, callback: ReaddirCallback): void => {
  const expected = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const gone = () => callback(Object.assign(new Error(`${expected} moved or is gone`), { code: 'ENOENT' }), []);
  // Opening and checking are cheap system calls made synchronously; only the listing goes to the thread pool.
  let descriptor: number;
  try {
    descriptor = openSync(expected, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return process.nextTick(gone);
  }
  const base = descriptorPaths ? `/proc/self/fd/${descriptor}` : expected;
  let pinnedHere = true;
  try {
    pinnedHere = !descriptorPaths || readlinkSync(base) === expected;
  } catch {
    pinnedHere = false;
  }
  if (!pinnedHere) {
    closeSync(descriptor);
    return process.nextTick(gone);
  }
  readdirCallback(base, { withFileTypes: true }, (error, entries) => {
    closeSync(descriptor);
    if (error) callback(error, []);
    else callback(null, entries);
  });
};
