import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Make a fresh temporary directory; the returned function removes it. */
export const makeTempDir = async (prefix = 'rein-test-'): Promise<{ path: string; remove: () => Promise<void> }> => {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
};

/** fast-check run count: modest by default, larger on demand with FC_RUNS. */
export const propertyRuns = (fallback: number): number => {
  const fromEnv = Number(process.env.FC_RUNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : fallback;
};
