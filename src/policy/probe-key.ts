import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';

/**
 * Which file `program` names for a spawn right now: a name without a slash is looked up on `PATH` the way a spawn
 * looks it up (the first executable entry), a path is taken as it is. The answer is the file's real path with its
 * inode, size and change time, so a stand-in put first on PATH, or the same path replaced, is another program; a
 * program found nowhere is `missing:<name>` (that answer does not depend on where it was looked for).
 */
export const programIdentity = (program: string, path: string = process.env.PATH ?? ''): string => {
  const candidates = program.includes('/') ? [program] : path.split(delimiter).map((folder) => resolve(folder || '.', program));
  for (const candidate of candidates) {
    try {
      // Most PATH entries lack the program: asked without an exception (a missing entry is skipped by the spawn too).
      if (statSync(candidate, { throwIfNoEntry: false }) === undefined) continue;
      accessSync(candidate, constants.X_OK);
      const real = realpathSync.native(candidate);
      const stat = statSync(real);
      if (!stat.isFile()) continue;
      return `${real}@${stat.ino}:${stat.size}:${stat.ctimeMs}`;
    } catch {
      // Not there or not executable: the spawn would look further on.
    }
  }
  return `missing:${program}`;
};

/**
 * The key a probe's answer is cached under: the user it runs as and every program and value the answer depends on.
 * Probes run real trials (a spawn each), so their answers are kept for the process; keyed this way, a process whose
 * PATH, programs or user change (an in-process test putting a failing stand-in first on PATH) probes again instead of
 * reusing an answer about another program. Cost: one `stat` per PATH entry tried, and `access`, `realpath` and `stat`
 * of the one found — far below the spawn a probe saves; a missing entry costs no exception.
 */
export const probeKey = (programs: readonly string[], values: readonly string[] = []): string =>
  [`uid ${process.getuid?.() ?? -1}`, ...programs.map((program) => programIdentity(program)), ...values].join('\0');
