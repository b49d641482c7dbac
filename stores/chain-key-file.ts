import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CHAIN_KEY_BYTES, ChainKey, randomBytes } from './chain-crypto.js';
import { StoreError } from './store-errors.js';

type Environment = Record<string, string | undefined>;

/**
 * rein's per-user configuration folder: `$REIN_CONFIG_HOME`, else `$XDG_CONFIG_HOME/rein`, else `~/.config/rein` (an
 * empty variable counts as unset). It holds the chain key, the trust store and the user's plugins.
 */
export const reinConfigHome = (env: Environment = process.env): string => resolve(env.REIN_CONFIG_HOME || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'rein'));

/**
 * Where this machine's chain key lives: `$REIN_CHAIN_KEY_FILE` (workers that share a PostgreSQL store point it at the
 * same key), else `chain.key` in rein's configuration folder — outside every workspace, hidden from sandboxed commands.
 */
export const chainKeyPath = (env: Environment = process.env): string => (env.REIN_CHAIN_KEY_FILE ? resolve(env.REIN_CHAIN_KEY_FILE) : join(reinConfigHome(env), 'chain.key'));

const KEY_TEXT = /^\s*([0-9a-f]{64})\s*$/;

/** The key a key file holds, after checking it is a regular file only its owner can read or write. */
const readKeyFile = async (path: string): Promise<ChainKey> => {
  const info = await stat(path);
  if (!info.isFile()) throw new StoreError('CHAIN_KEY_INVALID', `the chain key ${path} is not a regular file`);
  if ((info.mode & 0o077) !== 0) throw new StoreError('CHAIN_KEY_INVALID', `the chain key ${path} is open to other users (mode ${(info.mode & 0o777).toString(8)}): chmod 600 it`);
  const match = KEY_TEXT.exec(await readFile(path, 'latin1'));
  if (match === null) throw new StoreError('CHAIN_KEY_INVALID', `the chain key ${path} is not ${CHAIN_KEY_BYTES * 2} lower-case hex digits`);
  return ChainKey.create(Buffer.from(match[1]!, 'hex'));
};

/**
 * Writes a new random key at `path` (mode 0600, its folder 0700) without ever replacing one: the key is written to a
 * temporary file, synced, and linked into place, so two processes creating it at once agree on the one that won.
 */
const createKeyFile = async (path: string): Promise<void> => {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const file = await open(temporary, 'wx', 0o600);
  try {
    await file.writeFile(`${randomBytes(CHAIN_KEY_BYTES).toString('hex')}\n`, 'latin1');
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
};

/** Options of `loadChainKey`. */
export interface LoadChainKeyOptions {
  /** Create the key when there is none (writers); readers get undefined instead. */
  create: boolean;
  env?: Environment;
}

/**
 * This machine's chain key (see `chainKeyPath`), created on first use by a writer. Resolves undefined for a reader
 * when no key exists (nothing this machine wrote can be in the log then). `CHAIN_KEY_INVALID` for a key file that is
 * not a regular file, is open to other users or does not hold a key; `CHAIN_KEY_UNAVAILABLE` when it cannot be read
 * or created (a read-only or missing home: set `REIN_CONFIG_HOME` or `REIN_CHAIN_KEY_FILE`).
 */
export async function loadChainKey(options: LoadChainKeyOptions): Promise<ChainKey | undefined> {
  const path = chainKeyPath(options.env);
  try {
    return await readKeyFile(path);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unavailable(path, error);
    if (!options.create) return undefined;
  }
  try {
    await createKeyFile(path);
    return await readKeyFile(path);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw unavailable(path, error);
  }
}

const unavailable = (path: string, error: unknown): StoreError =>
  new StoreError('CHAIN_KEY_UNAVAILABLE', `the chain key ${path} cannot be ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'created' : 'used'} (${(error as NodeJS.ErrnoException).code ?? String(error)}): set REIN_CONFIG_HOME or REIN_CHAIN_KEY_FILE to a place rein can write`, { cause: error });
