import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StoreError } from '../../stores/store-errors.js';

/**
 * Create a store directory and its missing parents, or fail at once with `STORE_IO` naming the path and why. Node's
 * own `mkdir({ recursive: true })` never settles for a path under `/proc` (the kernel says "no such file" for a
 * directory whose parent exists, and it retries forever); this walks up at most once per path component.
 */
export const ensureStoreDirectory = async (root: string): Promise<void> => {
  const failed = (path: string, error: NodeJS.ErrnoException) =>
    new StoreError('STORE_IO', `the store directory ${root} cannot be created: ${error.code === 'ENOTDIR' ? `${path} has a part that is not a directory` : error.code === 'ENOENT' ? `${path} cannot be made here` : `${error.code ?? 'error'} at ${path}`}`);
  const make = async (path: string, parentTried: boolean): Promise<void> => {
    try {
      await mkdir(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        if ((await stat(path)).isDirectory()) return;
        throw new StoreError('STORE_IO', `the store directory ${root} cannot be created: ${path} exists and is not a directory`);
      }
      const parent = dirname(path);
      if (code === 'ENOENT' && !parentTried && parent !== path) {
        await make(parent, false);
        return make(path, true);
      }
      throw failed(path, error as NodeJS.ErrnoException);
    }
  };
  await make(root, false);
};
