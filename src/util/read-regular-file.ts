import { constants, open } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/**
 * What reading a file rein looks at on the host gave: its bytes, or why not. `missing` is a file (or a folder on its
 * path) that does not exist; `not_a_file` is a FIFO, socket, device or folder (`kind` says which); `too_large` is a
 * regular file over the caller's limit; `unreadable` is any other failure (`detail`: the system's code).
 */
export type RegularFileRead =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: 'missing' | 'unreadable'; detail: string }
  | { ok: false; reason: 'not_a_file'; kind: string }
  | { ok: false; reason: 'too_large'; size: number; limit: number };

/** How a file that is not a regular one is named in an error (`a FIFO`, `a folder`, …). */
export const fileKind = (info: Stats): string =>
  info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : info.isDirectory() ? 'a folder' : 'not a regular file';

/**
 * Read a file rein itself reads on the host — a workspace's `rein.config.json`, `.mcp.json`, a `SKILL.md`, a plugin
 * manifest, `.git/HEAD` — which a cloned repository or a command may have made anything: opened without blocking
 * (`O_NONBLOCK`, so a FIFO cannot hang the read; `O_NOCTTY`), then read only when the opened descriptor is a regular
 * file (checked with fstat on that descriptor, so nothing can swap the file between the check and the read) of at
 * most `maxBytes`. `noFollow` refuses a symbolic link as the last component (`unreadable`, `ELOOP`).
 */
export const readHostFile = async (path: string, options: { maxBytes?: number; noFollow?: boolean } = {}): Promise<RegularFileRead> => {
  const limit = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (options.noFollow ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: false, reason: code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable', detail: code };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, reason: 'not_a_file', kind: fileKind(info) };
    if (info.size > limit) return { ok: false, reason: 'too_large', size: info.size, limit };
    const bytes = await handle.readFile();
    if (bytes.length > limit) return { ok: false, reason: 'too_large', size: bytes.length, limit };
    return { ok: true, bytes };
  } catch (error) {
    return { ok: false, reason: 'unreadable', detail: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  } finally {
    await handle.close().catch(() => undefined);
  }
};

/** One sentence on why a file could not be read (`rein.config.json is not a regular file (a FIFO)`), naming it as `name`. */
export const hostFileProblem = (name: string, result: Exclude<RegularFileRead, { ok: true }>): string => {
  switch (result.reason) {
    case 'not_a_file':
      return `${name} is not a regular file (${result.kind})`;
    case 'too_large':
      return `${name} is ${result.size} bytes; at most ${result.limit}`;
    case 'missing':
      return `${name} does not exist (${result.detail})`;
    case 'unreadable':
      return `cannot read ${name} (${result.detail})`;
  }
};

/**
 * `readHostFile` for a file that may simply be absent: its bytes, or undefined for anything else (missing, a FIFO,
 * a socket, a device, a folder, too large) — the caller treats it as absent.
 */
export const readRegularFile = async (path: string, maxBytes: number): Promise<Buffer | undefined> => {
  const result = await readHostFile(path, { maxBytes });
  return result.ok ? result.bytes : undefined;
};

/**
 * A text file that may be absent (a project's `rein.config.json`, `.mcp.json`): its UTF-8 text, undefined when it
 * does not exist, and for anything else (a FIFO, a folder, unreadable) the error `fail` makes of the sentence
 * naming the file as `name`.
 */
export const readHostTextIfPresent = async (path: string, name: string, fail: (message: string) => Error, options: { maxBytes?: number } = {}): Promise<string | undefined> => {
  const result = await readHostFile(path, options);
  if (result.ok) return result.bytes.toString('utf8');
  if (result.reason === 'missing') return undefined;
  throw fail(hostFileProblem(name, result));
};
