import { statSync } from 'node:fs';

/**
 * True when nothing is at `path` (ENOENT, a dangling link included), asked without building an exception: a caller that
 * would read a folder or file and treat its absence as empty skips the read (and the error the read would throw) on this
 * answer. Any other answer — it exists, or asking failed otherwise (ENOTDIR, EACCES) — is false, so the caller reads and
 * handles the outcome as before.
 */
export const surelyAbsent = (path: string): boolean => {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
};
