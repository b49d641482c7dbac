import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ReinError } from '../host/host-errors.js';
import { canonicalPath, isInside, reinConfigHome } from '../policy/protected-paths.js';

/*
 * Package launchers — `npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx` — resolve the package they run from the
 * workspace first (its `node_modules`, its `.npmrc`, `.yarnrc.yml`, `bunfig.toml`), and put the workspace's
 * `node_modules/.bin` first on the PATH of what they start: files the model can write. So a launcher counts as naming
 * workspace files. rein runs a launcher's package without the workspace instead: it installs the package with npm
 * into a folder of its own (`<rein config home>/packages/<digest of the specs>`, outside every workspace, npm run
 * there so no workspace configuration is read) and starts the package's program by its path, from the same working
 * directory and with the same arguments. A launcher whose options rein cannot read is not rewritten: the caller runs
 * it in the sandbox or not at all.
 */

/** A launcher call rein can run without the workspace: the packages to install, the program to start and its arguments. */
export interface LauncherCall {
  launcher: string;
  /** Package specs to install (`pkg`, `@scope/pkg@1.2.3`, a tarball path or URL). */
  packages: string[];
  /** The program to run: a bin of one of the packages (undefined: the bin of the only package, as npx picks it). */
  command?: string;
  args: string[];
}

/** A launcher that rein cannot run without the workspace, and why. */
export interface UnreadableLauncher {
  launcher: string;
  unreadable: string;
}

const launcherOf = (argv: readonly string[]): { launcher: string; rest: string[] } | undefined => {
  const program = basename(argv[0] ?? '');
  const second = argv[1];
  if (program === 'npx' || program === 'bunx' || program === 'pnpx') return { launcher: program, rest: argv.slice(1) };
  if (program === 'npm' && (second === 'exec' || second === 'x')) return { launcher: `npm ${second}`, rest: argv.slice(2) };
  if ((program === 'pnpm' || program === 'yarn') && second === 'dlx') return { launcher: `${program} dlx`, rest: argv.slice(2) };
  if (program === 'bun' && second === 'x') return { launcher: 'bun x', rest: argv.slice(2) };
  // Runners of the workspace's own bins and scripts: what they run is a workspace file by definition.
  if ((program === 'pnpm' || program === 'yarn' || program === 'npm' || program === 'bun') && (second === 'exec' || second === 'run' || second === 'run-script' || second === 'test' || second === 'start')) return { launcher: `${program} ${second}`, rest: [] };
  return undefined;
};

/** Options of the launchers that change nothing about what runs (`-y`, `--quiet`, `--bun`). */
const harmless = new Set(['-y', '--yes', '-q', '--quiet', '--silent', '-s', '--bun', '--prefer-offline', '--prefer-online', '--no-install', '--no', '-n']);
const packageOptions = new Set(['-p', '--package']);

/**
 * Read a launcher's command line (`[command, ...args]`): undefined when it is not a launcher, `{ unreadable }` when it
 * is one whose options rein does not know (or that runs the workspace's own scripts), else the call.
 */
export const parseLauncher = (argv: readonly string[]): LauncherCall | UnreadableLauncher | undefined => {
  const found = launcherOf(argv);
  if (!found) return undefined;
  const { launcher, rest } = found;
  if (rest.length === 0) return { launcher, unreadable: `${launcher} runs the workspace's own scripts or bins` };
  const packages: string[] = [];
  let index = 0;
  for (; index < rest.length; index++) {
    const arg = rest[index]!;
    if (arg === '--') {
      index++;
      break;
    }
    if (!arg.startsWith('-')) break;
    if (harmless.has(arg)) continue;
    const [name, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (packageOptions.has(name)) {
      const spec = value ?? rest[++index];
      if (spec === undefined) return { launcher, unreadable: `${launcher} ${name} without a package` };
      packages.push(spec);
      continue;
    }
    return { launcher, unreadable: `${launcher} ${arg} is an option rein cannot read` };
  }
  const first = rest[index];
  if (first === undefined) return { launcher, unreadable: `${launcher} without a package` };
  const local = (spec: string) => /^(?:\.{1,2}(?:\/|$)|\/|~|file:|link:|workspace:|portal:)/.test(spec);
  if ([...packages, first].some(local)) return { launcher, unreadable: `${launcher} runs a package from a path (${[...packages, first].find(local)})` };
  return packages.length > 0 ? { launcher, packages, command: first, args: rest.slice(index + 1) } : { launcher, packages: [first], args: rest.slice(index + 1) };
};

/** How a resolved launcher runs: the program and its leading arguments (the call's arguments follow), and where it was installed. */
export interface ResolvedLauncher {
  argv: string[];
  prefix: string;
}

/** Install options (injectable for tests): rein's folder for packages, the npm to run, its environment, the time allowed. */
export interface ResolveOptions {
  /** Where packages are installed (default `<reinConfigHome>/packages`). */
  home?: string;
  npm?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** The workspace: the packages folder must lie outside it. */
  workspace?: string;
}

const run = (command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; output: string }> =>
  new Promise((done) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      done({ code: null, output: error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });

const unscoped = (name: string): string => name.slice(name.lastIndexOf('/') + 1);

/** The bin a package offers under `command` (or its only one, or the one named after it), as a file path. */
const binOf = async (prefix: string, name: string, command: string | undefined): Promise<string | undefined> => {
  const manifest = JSON.parse(await readFile(join(prefix, 'node_modules', name, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bins = typeof manifest.bin === 'string' ? { [unscoped(name)]: manifest.bin } : (manifest.bin ?? {});
  const entries = Object.entries(bins);
  const chosen = command !== undefined ? bins[command] : entries.length === 1 ? entries[0]![1] : bins[unscoped(name)];
  return chosen === undefined ? undefined : join(prefix, 'node_modules', name, chosen);
};

/** Whether a bin is a Node program (a `node` shebang or a JavaScript extension): it is started with this Node. */
const isNodeProgram = async (path: string): Promise<boolean> => {
  if (/\.(?:c|m)?js$/.test(path)) return true;
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const buffer = Buffer.alloc(128);
    const { bytesRead } = await handle.read(buffer, 0, 128, 0);
    return /^#!.*\bnode\b/.test(buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '');
  } finally {
    await handle.close();
  }
};

/**
 * Install a launcher call's packages into rein's packages folder (once per set of specs; a later call reuses the
 * install) and return how to start its program there. Throws `LAUNCHER_UNRESOLVED` when npm cannot install them or the
 * program is not among their bins. The workspace is never read: npm runs in the packages folder, with `--prefix` there.
 */
export const resolveLauncher = async (call: LauncherCall, options: ResolveOptions = {}): Promise<ResolvedLauncher> => {
  const home = resolve(options.home ?? join(reinConfigHome(options.env ?? process.env), 'packages'));
  if (options.workspace !== undefined && isInside(canonicalPath(resolve(options.workspace)), canonicalPath(home))) {
    throw new ReinError('LAUNCHER_UNRESOLVED', `rein's packages folder ${home} lies inside the workspace: ${call.launcher} would still run files the model can write`);
  }
  const specs = [...call.packages].sort();
  const prefix = join(home, createHash('sha256').update(specs.join('\n')).digest('hex').slice(0, 16));
  const marker = join(prefix, 'rein-packages.json');
  const installed = await readFile(marker, 'utf8').then((text) => JSON.parse(text) as { specs: string[]; names: string[] }).catch(() => undefined);
  let names = installed && JSON.stringify(installed.specs) === JSON.stringify(specs) ? installed.names : undefined;
  if (names === undefined) {
    // Installed beside the final folder and moved in place whole, so two processes never see half an install.
    const staging = `${prefix}.tmp-${randomBytes(6).toString('hex')}`;
    await mkdir(staging, { recursive: true });
    try {
      await writeFile(join(staging, 'package.json'), `${JSON.stringify({ name: 'rein-launched-packages', private: true })}\n`);
      const npm = options.npm ?? 'npm';
      const result = await run(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', staging, ...specs], { cwd: staging, env: options.env ?? process.env, timeoutMs: options.timeoutMs ?? 300_000 });
      if (result.code !== 0) throw new ReinError('LAUNCHER_UNRESOLVED', `npm could not install ${specs.join(', ')} for ${call.launcher} (exit ${result.code ?? 'none'}): ${result.output.trim().split('\n').slice(-3).join(' ')}`);
      const manifest = JSON.parse(await readFile(join(staging, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      names = Object.keys(manifest.dependencies ?? {});
      await writeFile(join(staging, 'rein-packages.json'), `${JSON.stringify({ specs, names })}\n`);
      await mkdir(dirname(prefix), { recursive: true });
      // Another process may have finished the same install meanwhile: its copy is kept (a server may run from it).
      const theirs = await readFile(marker, 'utf8').then((text) => (JSON.parse(text) as { specs: string[] }).specs, () => undefined);
      if (JSON.stringify(theirs) !== JSON.stringify(specs)) {
        await rm(prefix, { recursive: true, force: true });
        await rename(staging, prefix).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        });
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  for (const name of names) {
    const bin = await binOf(prefix, name, call.command ?? (names.length === 1 ? undefined : unscoped(name)));
    if (bin === undefined) continue;
    return { argv: (await isNodeProgram(bin)) ? [process.execPath, bin] : [bin], prefix };
  }
  throw new ReinError('LAUNCHER_UNRESOLVED', `${specs.join(', ')} offers no program ${call.command ?? 'named after the package'} for ${call.launcher} to run`);
};
