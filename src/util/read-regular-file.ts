import { constants, open } from 'node:fs/promises';

/**
 * Read a small file rein itself looks at on the host (`.git/HEAD`, a `gitdir:` pointer, a script a config names),
 * which a command may have replaced: opened without blocking, so a FIFO cannot hang the read, and read only when the
 * open descriptor is a regular file of at most `maxBytes`. Undefined for anything else (missing, a FIFO, a socket,
 * a device, a folder, too large): the caller treats it as absent or reports it.
 */
export const readRegularFile = async (path: string, maxBytes: number): Promise<Buffer | undefined> => {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return undefined;
    return await handle.readFile();
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
};
