import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster on 127.0.0.1 (see `startPostgresCluster`). */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: trust authentication, no password. */
  readonly url: string;
  readonly port: number;
  /** The cluster's data directory. */
  readonly dataDirectory: string;
  /** Stop the server (fast shutdown: clients are disconnected) and start it again on the same port and data. */
  restart(): Promise<void>;
  /** Stop the server without removing anything (`start` brings it back). */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  /** Stop the server and remove its directory. */
  stop(): Promise<void>;
}

/** Options of `startPostgresCluster`. */
export interface PostgresClusterOptions {
  /** The directory holding `initdb` and `pg_ctl` (default: the newest `/usr/lib/postgresql/<version>/bin`). */
  binDirectory?: string;
  /** Turn off fsync and full-page writes (default true): for tests only, a crash of the machine loses the cluster. */
  unsafeFast?: boolean;
  /** Server `max_connections` (default 300). */
  maxConnections?: number;
}

/** The newest Debian-style PostgreSQL binary directory on this machine, or undefined when none is installed. */
export const findPostgresBinaries = (): string | undefined => {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(base, name, 'bin', 'pg_ctl')))
    .sort((left, right) => Number(right) - Number(left));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
};

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/** `initdb` and `pg_ctl` refuse to run as root: as root they run as the `postgres` user through `runuser`. */
const asClusterOwner = (binary: string, args: readonly string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, [...args]];

const exec = async (binary: string, args: readonly string[]): Promise<void> => {
  const [command, argv] = asClusterOwner(binary, args);
  await run(command, argv, { timeout: 120_000 });
};

/**
 * A detached process that stops the cluster and removes its directory once `parent` is gone, so a test run that is
 * killed (and never reaches its teardown) leaves no server behind.
 */
const WATCHDOG = `
const { execFileSync } = require('node:child_process');
const { rmSync } = require('node:fs');
const [parent, pgCtl, data, root, asRoot] = process.argv.slice(1);
const alive = () => { try { process.kill(Number(parent), 0); return true; } catch { return false; } };
const timer = setInterval(() => {
  if (alive()) return;
  clearInterval(timer);
  const args = ['-D', data, '-m', 'immediate', '-w', 'stop'];
  try { asRoot === '1' ? execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'ignore' }) : execFileSync(pgCtl, args, { stdio: 'ignore' }); } catch {}
  rmSync(root, { recursive: true, force: true });
}, 1000);
`;

const startWatchdog = (pgCtl: string, dataDirectory: string, root: string): void => {
  const child = spawn(process.execPath, ['-e', WATCHDOG, String(process.pid), pgCtl, dataDirectory, root, process.getuid?.() === 0 ? '1' : '0'], { detached: true, stdio: 'ignore' });
  child.unref();
};

/**
 * Start a throwaway PostgreSQL cluster from the installed binaries: `initdb -A trust` in a new temporary directory
 * (owned by `postgres` when running as root), listening on 127.0.0.1 on a free port with its socket in that
 * directory. For tests and benchmarks; `stop` removes everything, and so does a watchdog process once this process is
gone without stopping it (a killed test run). Rejects when PostgreSQL is not installed.
 */
export const startPostgresCluster = async (options: PostgresClusterOptions = {}): Promise<PostgresCluster> => {
  const bin = options.binDirectory ?? findPostgresBinaries();
  if (bin === undefined) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin); install the postgresql package');
  const root = await mkdtemp(join(tmpdir(), 'rein-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(group.trim()));
  }
  const dataDirectory = join(root, 'data');
  await exec(join(bin, 'initdb'), ['-D', dataDirectory, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const settings = [`-p ${port}`, `-k ${root}`, '-c listen_addresses=127.0.0.1', `-c max_connections=${options.maxConnections ?? 300}`];
  if (options.unsafeFast ?? true) settings.push('-c fsync=off', '-c full_page_writes=off');
  const pgCtl = join(bin, 'pg_ctl');
  const startServer = () => exec(pgCtl, ['-D', dataDirectory, '-l', join(root, 'server.log'), '-o', settings.join(' '), '-w', '-t', '60', 'start']);
  const stopServer = () => exec(pgCtl, ['-D', dataDirectory, '-m', 'fast', '-w', '-t', '60', 'stop']);
  await startServer();
  startWatchdog(pgCtl, dataDirectory, root);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDirectory,
    startServer,
    stopServer,
    restart: async () => {
      await stopServer();
      await startServer();
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await exec(pgCtl, ['-D', dataDirectory, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
};
