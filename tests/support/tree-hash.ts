import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file under `root` (recursively) with the SHA-256 of its bytes, by relative path: a byte-level fingerprint. */
export const hashTree = async (root: string): Promise<Record<string, string>> => {
  const result: Record<string, string> = {};
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        result[`${relative(root, path)}/`] = 'directory';
        await walk(path);
      } else {
        result[relative(root, path)] = createHash('sha256').update(await readFile(path)).digest('hex');
      }
    }
  };
  await walk(root);
  return result;
};
