import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { canonicalPath } from '../policy/protected-paths.js';
import { stat } from 'node:fs/promises';
import type { EventStore } from '../../stores/event-store.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { ensureStoreDirectory } from './store-directory.js';
import { readHostTextIfPresent } from '../util/read-regular-file.js';
import { isPostgresUrl } from '../../stores/postgres/postgres-url.js';
import { isLoopbackHost } from '../util/loopback-host.js';
import { shellWord } from '../util/shell-word.js';
import { noteOpenedStore } from './opened-store.js';
import { ReinError } from '../host/host-errors.js';
import { configFileName } from '../providers/config-file-name.js';
import type { CommonOptions } from './command-options.js';
import { jsonProblem } from '../util/json-problem.js';

/** Query parameters whose value pg-connection-string opens as a file (`readFileSync`) while it parses the URL. */
const sslFileParameters = ['sslcert', 'sslkey', 'sslrootcert'];

/**
 * The host pg will connect to for a workspace file's postgres URL, as the driver's own parser (pg-connection-string,
 * which `pg.Pool({ connectionString })` uses) reads it: undefined for none (pg's default, the local socket or
 * PGHOST). A parameter given twice (`?host=127.0.0.1&host=db.example`: rein would read one, pg the other) and the
 * parameters that make the parser read host files (`sslcert`, `sslkey`, `sslrootcert`) are `CONFIG_INVALID`.
 */
const postgresHostOf = async (url: string): Promise<string | undefined> => {
  let query: URLSearchParams;
  try {
    query = new URL(url).searchParams;
  } catch {
    throw new ReinError('CONFIG_INVALID', `${configFileName}: the store URL cannot be read as a URL`);
  }
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (seen.has(name)) throw new ReinError('CONFIG_INVALID', `${configFileName}: the store URL gives ${JSON.stringify(name)} more than once; a connection parameter may appear once`);
    seen.add(name);
    if (sslFileParameters.includes(name)) throw new ReinError('CONFIG_INVALID', `${configFileName}: the store URL names ${name}, a file pg would read from this machine; put it in --store or REIN_STORE instead`);
  }
  const { parse } = await import('pg-connection-string');
  let host: string | null | undefined;
  try {
    host = parse(url).host;
  } catch {
    throw new ReinError('CONFIG_INVALID', `${configFileName}: the store URL cannot be read as a PostgreSQL connection string`);
  }
  return host === null || host === undefined || host === '' ? undefined : host;
};

export type { CommonOptions } from './command-options.js';

/**
 * Resolve the workspace: `--workspace`, else the root of the git repository the current directory is in (the nearest
 * folder above holding `.git`, a directory or a worktree's file — but never the home directory or `/`, whose `.git`
 * is a dotfiles repository, not a project), else the current directory. It must be an existing directory.
 */
export const workspaceOf = async (options: CommonOptions): Promise<string> => {
  const workspace = resolve(options.workspace ?? (await repositoryRootOf(process.cwd())) ?? process.cwd());
  const info = await stat(workspace).catch(() => undefined);
  if (!info?.isDirectory()) throw new ReinError('USAGE', `workspace ${workspace} is not a directory`);
  return workspace;
};

/** The root of the git repository `directory` is in (see `workspaceOf`), or undefined. */
export const repositoryRootOf = async (directory: string): Promise<string | undefined> => {
  const home = resolve(homedir());
  for (let current = resolve(directory); ; ) {
    if (current === home || current === dirname(current)) return undefined;
    if (await stat(join(current, '.git')).then(() => true, () => false)) return current;
    current = dirname(current);
  }
};

/**
 * The flags a printed follow-up command (`continue it with rein resume <id>`) needs to find the same store: the
 * `--workspace` and a directory `--store` this command was given, each as one shell word; empty when it was given
 * neither. A `postgres://` store is not repeated: its URL may hold a password.
 */
export const storeFlags = (options: { workspace?: string; store?: string }): string =>
  `${options.workspace !== undefined ? ` --workspace ${shellWord(options.workspace)}` : ''}${options.store !== undefined && !isPostgresUrl(options.store) ? ` --store ${shellWord(options.store)}` : ''}`;

/**
 * What `rein run` and `rein resume` tell a person whose workspace is not the directory they are in (a repository's
 * root above it): so nobody wonders why the agent sees the whole repository. Undefined otherwise.
 */
export const workspaceNote = (options: CommonOptions, workspace: string): string | undefined =>
  options.workspace === undefined && workspace !== resolve(process.cwd()) ? `workspace ${workspace}: the root of the git repository you are in (--workspace . for this folder only)` : undefined;

/**
 * A warning when the workspace is the file system's root or the user's home directory: the sandbox gives a command the
 * whole workspace read-write, so there it can read keys (`.ssh`, `.netrc`) and rewrite what a later login shell or tool
 * runs outside the sandbox (`.bashrc`, `.gitconfig`). rein's own folders stay protected; these do not.
 */
export const broadWorkspaceWarning = (workspace: string): string | undefined => {
  const root = canonicalPath(workspace);
  const home = canonicalPath(homedir());
  if (root !== '/' && root !== home) return undefined;
  return `the workspace is ${root === '/' ? 'the file system\'s root' : 'your home directory'} (${root}): sandboxed commands may read and change everything in it, your dotfiles (.bashrc, .ssh, .gitconfig) included; run rein in a project folder (--workspace <dir>)`;
};

/**
 * The `store` field of `<workspace>/rein.config.json`, read without the config schema (reading commands stay light;
 * commands that resolve a provider validate the whole file). A non-string, or a URL holding a password, is
 * `CONFIG_INVALID`.
 */
const configuredStore = async (workspace: string, reading: boolean): Promise<string | undefined> => {
  const text = await readHostTextIfPresent(resolve(workspace, configFileName), configFileName, (message) => new ReinError('CONFIG_INVALID', message));
  if (text === undefined) return undefined;
  // A file that cannot be read as a configuration at all: a reading command says so and reads the default store (it
  // changes nothing); the others refuse it. What a readable file asks for is checked for everyone (below).
  const unreadable = (message: string, cause?: unknown): undefined => {
    if (!reading) throw new ReinError('CONFIG_INVALID', message, cause === undefined ? undefined : { cause });
    process.stderr.write(`rein: warning: ${message}; reading the default store ${resolve(workspace, '.rein')}\n`);
    return undefined;
  };
  let store: unknown;
  try {
    store = (JSON.parse(text) as { store?: unknown } | null)?.store;
  } catch (error) {
    return unreadable(`${configFileName} is not valid JSON (${jsonProblem(text, error)})`, error);
  }
  if (store === undefined) return undefined;
  if (typeof store !== 'string' || store === '') return unreadable(`${configFileName}: store must be a directory or a postgres:// URL`);
  if (/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/i.test(store)) throw new ReinError('CONFIG_INVALID', `${configFileName}: a store URL in this file must not hold a password: use PGPASSWORD or ~/.pgpass`);
  // Every session's transcript (file contents included) goes to the store: a repository's file alone may not send it
  // off this machine. A remote database is the user's to choose, with --store or REIN_STORE.
  if (isPostgresUrl(store)) {
    const host = await postgresHostOf(store);
    if (host !== undefined && !isLoopbackHost(host) && !host.startsWith('/')) throw new ReinError('USAGE', `${configFileName} puts the store on ${host}, which is not this machine: every session's transcript would go there; confirm it with --store or REIN_STORE (a repository's file alone cannot choose where your sessions are written)`);
  }
  return store;
};

/**
 * Where the store is: `--store`, else `REIN_STORE`, else `store` in `rein.config.json`, else `<workspace>/.rein`. A
 * `postgres://` URL is returned as it is; a directory is resolved (from the working directory, or from the workspace
 * when it comes from the config file).
 */
export const storeLocationOf = async (options: CommonOptions, workspace: string, reading = false): Promise<string> => {
  const given = options.store ?? (process.env.REIN_STORE || undefined);
  if (given !== undefined) return isPostgresUrl(given) ? given : resolve(given);
  const configured = await configuredStore(workspace, reading);
  if (configured !== undefined) return isPostgresUrl(configured) ? configured : resolve(workspace, configured);
  return resolve(workspace, '.rein');
};

/**
 * Paths tools must never touch beyond every workspace's protected entries (`protectedWorkspaceEntries`: `.rein`,
 * `rein.config.json`, `.mcp.json`, the skill and plugin folders): the store directory actually in use.
 */
export const protectedPathsOf = async (options: CommonOptions, workspace: string): Promise<string[]> => {
  const location = await storeLocationOf(options, workspace);
  return [resolve(workspace, '.rein'), ...(isPostgresUrl(location) ? [] : [location]), resolve(workspace, configFileName)];
};

/**
 * Open the store (default `<workspace>/.rein`), creating its directory for writers. `read-only` never opens a
 * database in place (reads go through temporary copies), so the store stays byte-identical. A `postgres://` URL opens
 * the PostgreSQL store (the driver loads only then); its reads never change anything, whatever the mode.
 */
export const openStore = async (options: CommonOptions, workspace: string, mode: 'read' | 'write' | 'read-only'): Promise<EventStore> => {
  const location = await storeLocationOf(options, workspace, mode !== 'write');
  noteOpenedStore(isPostgresUrl(location) ? location : resolve(location));
  if (mode !== 'write' && !isPostgresUrl(location)) await mustBeStoreDirectory(location, location !== resolve(workspace, '.rein'));
  return openStoreAt(location, { mode, relaxed: Boolean(options.relaxed) });
};

/**
 * A store a reading command is pointed at must be a directory: one that was named (`--store`, `REIN_STORE`, the config
 * file) and does not exist is `STORE_NOT_FOUND` — a typo, not an empty store — and a file there is the same code, not
 * the file system's `ENOTDIR`. A workspace's own `.rein` that does not exist yet is an empty store.
 */
const mustBeStoreDirectory = async (location: string, named: boolean): Promise<void> => {
  const info = await stat(location).catch(() => undefined);
  if (info === undefined) {
    if (named) throw new ReinError('STORE_NOT_FOUND', `no store at ${location}: the directory does not exist (check --store, REIN_STORE or the store in ${configFileName})`);
    return;
  }
  if (!info.isDirectory()) throw new ReinError('STORE_NOT_FOUND', `no store at ${location}: it is a file, not a store directory`);
};

/** Open the store at `location` (a directory, resolved from the working directory, or a `postgres://` URL); see `openStore`. */
export const openStoreAt = async (location: string, options: { mode: 'read' | 'write' | 'read-only'; relaxed?: boolean }): Promise<EventStore> => {
  const durability = options.relaxed ? 'relaxed' : 'sync';
  if (isPostgresUrl(location)) {
    const { openPostgresEventStore } = await import('../../stores/postgres/postgres-event-store.js');
    const retry = Number(process.env.REIN_STORE_RETRY_MS);
    return openPostgresEventStore(location, { durability, applicationName: 'rein-cli', ...(Number.isSafeInteger(retry) && retry >= 0 ? { retryForMs: retry } : {}) });
  }
  const root = resolve(location);
  if (options.mode === 'write') await ensureStoreDirectory(root);
  return openLevelEventStore(root, { durability, readOnly: options.mode === 'read-only' });
};

/** Print one value as a JSON line. */
export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
