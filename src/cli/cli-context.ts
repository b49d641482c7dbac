import { resolve } from 'node:path';
import { mkdir, stat } from 'node:fs/promises';
import type { EventStore } from '../../stores/event-store.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { ReinError } from '../host/host-errors.js';
import { configFileName } from '../providers/config-file-name.js';
import type { CommonOptions } from './command-options.js';

export type { CommonOptions } from './command-options.js';

/** Resolve the workspace (default: the current directory); it must be an existing directory. */
export const workspaceOf = async (options: CommonOptions): Promise<string> => {
  const workspace = resolve(options.workspace ?? process.cwd());
  const info = await stat(workspace).catch(() => undefined);
  if (!info?.isDirectory()) throw new ReinError('USAGE', `workspace ${workspace} is not a directory`);
  return workspace;
};

/** The store directory: `--store`, or `<workspace>/.rein`. */
export const storeRootOf = (options: CommonOptions, workspace: string): string => resolve(options.store ?? resolve(workspace, '.rein'));

/**
 * Paths tools must never touch: the default store location, the store actually in use, and the workspace config
 * file (a model that could rewrite `rein.config.json` could point the next run's API key at another server).
 */
export const protectedPathsOf = (options: CommonOptions, workspace: string): string[] => [resolve(workspace, '.rein'), storeRootOf(options, workspace), resolve(workspace, configFileName)];

/**
 * Open the store (default `<workspace>/.rein`), creating its directory for writers. `read-only` never opens a
 * database in place (reads go through temporary copies), so the store stays byte-identical.
 */
export const openStore = async (options: CommonOptions, workspace: string, mode: 'read' | 'write' | 'read-only'): Promise<EventStore> => {
  const root = storeRootOf(options, workspace);
  if (mode === 'write') await mkdir(root, { recursive: true });
  return openLevelEventStore(root, { durability: options.relaxed ? 'relaxed' : 'sync', readOnly: mode === 'read-only' });
};

/** Print one value as a JSON line. */
export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
