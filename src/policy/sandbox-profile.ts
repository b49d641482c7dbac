import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { isInside } from './protected-paths.js';

/** One mount of the sandbox's file system, with the reason it is there (`rein sandbox` prints both). */
export type SandboxMount =
  | { kind: 'ro-bind' | 'bind'; source: string; target: string; why: string }
  | { kind: 'symlink'; link: string; target: string; why: string }
  | { kind: 'tmpfs'; target: string; why: string; sizeMb?: number; mode?: string }
  | { kind: 'proc' | 'dev'; target: string; why: string }
  | { kind: 'mask-file' | 'mask-directory'; target: string; why: string }
  | { kind: 'remount-ro'; target: string; why: string }
  | { kind: 'dir'; target: string; why: string };

/** What a sandbox is built around. Paths are canonical. */
export interface ProfileInput {
  workspace: string;
  /** Whether commands may change the workspace (`bash`: yes; the search tools: no). */
  workspaceWritable: boolean;
  /** Protected paths; those that exist inside the workspace are masked (or only read-only, see `protectedReadable`). */
  protectedPaths: readonly string[];
  /**
   * Protected paths are bound read-only instead of hidden: for a command the user configured (a hook), which may
   * run a protected script of the workspace but must not change it.
   */
  protectedReadable?: boolean;
  /** Protected paths that are always bound read-only rather than hidden (the repository's git configuration and hooks). */
  readableProtected?: readonly string[];
  /** The home directory commands see: an empty, writable tmpfs at this path. */
  home: string;
  /** Directories a sandboxed tool needs its binaries from (read-only): ripgrep's, Node's when outside `/usr`. */
  toolDirectories?: readonly string[];
  /** Files bound read-only at the same path (the allow-list proxy's socket). */
  extraFiles?: readonly string[];
  /** The size of each writable tmpfs (`/tmp`, the home, `/dev/shm`) in MB; unbounded when not given. */
  tmpSizeMb?: number;
  /**
   * The command runs as another uid than bubblewrap (rein is root; see `sandbox-identity.ts`): the home bubblewrap
   * makes must be writable by everyone in the sandbox (0777) instead of its owner only.
   */
  foreignUser?: boolean;
}

/** The read-only system directories every sandbox sees; a directory that is a symlink here is recreated as one. */
export const systemDirectories: readonly string[] = Object.freeze(['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc']);

/** How the profile sees the host file system; injected by tests. */
export interface HostFiles {
  kind(path: string): 'directory' | 'file' | 'missing' | { symlink: string };
}

export const hostFiles: HostFiles = {
  kind(path) {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) return { symlink: readlinkSync(path) };
      return info.isDirectory() ? 'directory' : 'file';
    } catch {
      return 'missing';
    }
  },
};

const depth = (path: string): number => path.split('/').filter(Boolean).length;

/**
 * The sandbox's file system, as data: the system directories read-only, a private tmpfs at `/tmp`, an empty
 * writable home, minimal `/proc` and `/dev`, the workspace (read-write for commands), and every protected path that
 * exists inside it masked — a directory by an empty read-only tmpfs, a file by a read-only `/dev/null`. Nothing else
 * of the host is visible. Mounts are ordered so that an outer one never hides an inner one.
 */
export const sandboxMounts = (input: ProfileInput, host: HostFiles = hostFiles): SandboxMount[] => {
  const sized = input.tmpSizeMb === undefined ? {} : { sizeMb: input.tmpSizeMb };
  const system: SandboxMount[] = [];
  for (const directory of systemDirectories) {
    const kind = host.kind(directory);
    if (kind === 'missing' || kind === 'file') continue;
    if (typeof kind === 'object') system.push({ kind: 'symlink', link: kind.symlink, target: directory, why: 'system directory (a symlink on this host)' });
    else system.push({ kind: 'ro-bind', source: directory, target: directory, why: directory === '/etc' ? 'system configuration, read-only' : 'system programs and libraries, read-only' });
  }
  const tools = (input.toolDirectories ?? []).filter((directory) => !systemDirectories.some((root) => isInside(root, directory)));
  const layered: SandboxMount[] = [
    ...tools.map((directory) => ({ kind: 'ro-bind' as const, source: directory, target: directory, why: 'programs a sandboxed command needs (ripgrep, the Node.js rein runs on), read-only' })),
    { kind: 'tmpfs', target: '/tmp', why: 'a private, empty /tmp', ...sized, mode: '1777' },
    ...(input.home !== input.workspace && input.home !== '/' ? [{ kind: 'tmpfs' as const, target: input.home, why: 'an empty, writable home: no profile, keys or history of the user', ...sized, mode: input.foreignUser ? '0777' : '0700' }] : []),
    { kind: input.workspaceWritable ? 'bind' : 'ro-bind', source: input.workspace, target: input.workspace, why: input.workspaceWritable ? 'the workspace, read-write' : 'the workspace, read-only' },
    ...(input.extraFiles ?? []).map((file) => ({ kind: 'ro-bind' as const, source: file, target: file, why: 'the network allow-list proxy\'s socket' })),
  ];
  const pinned = new Set<string>();
  const readable = new Set(input.readableProtected ?? []);
  for (const path of input.protectedPaths) {
    if (path === input.workspace || !isInside(input.workspace, path)) continue;
    const kind = host.kind(path);
    if ((input.protectedReadable || readable.has(path)) && (kind === 'directory' || kind === 'file')) layered.push({ kind: 'ro-bind', source: path, target: path, why: 'protected: read-only' });
    else if (kind === 'directory') layered.push({ kind: 'mask-directory', target: path, why: 'protected: hidden behind an empty read-only directory' });
    else if (kind === 'file') layered.push({ kind: 'mask-file', target: path, why: 'protected: hidden, reads and writes fail' });
    else continue;
    // A mask moves with its folder: `mv .agents old && mkdir -p .agents/skills` would put an unmasked impostor where
    // the protected path was. Each folder between the workspace and a masked path is bound onto itself, which makes
    // it a mount point the command can write in but not rename or remove (EBUSY).
    for (let folder = dirname(path); folder !== input.workspace && isInside(input.workspace, folder) && !pinned.has(folder); folder = dirname(folder)) {
      if (host.kind(folder) !== 'directory') break;
      pinned.add(folder);
      layered.push({ kind: 'bind', source: folder, target: folder, why: 'holds a protected path: pinned in place (it cannot be renamed or removed)' });
    }
  }
  layered.push(...foldersOnTheWay(system, layered));
  const ordered = layered.map((mount, index) => ({ mount, index })).sort((left, right) => depth(left.mount.target) - depth(right.mount.target) || left.index - right.index).map(({ mount }) => mount);
  return [
    ...system,
    ...ordered,
    { kind: 'proc', target: '/proc', why: 'processes of this sandbox only' },
    ...kernelMounts(host),
    { kind: 'dev', target: '/dev', why: 'minimal devices (null, zero, random, tty)' },
    { kind: 'tmpfs', target: '/dev/shm', why: 'private shared memory', ...sized, mode: '1777' },
    { kind: 'remount-ro', target: '/dev', why: 'no new device files' },
    { kind: 'remount-ro', target: '/', why: 'the sandbox\'s own root: nothing can be written outside the workspace and the tmpfs mounts above' },
  ];
};

/**
 * The folders bubblewrap would make on the way to a mount target in its own tmpfs (`/work` of a workspace at
 * `/work/project`, a folder under `/tmp`): made explicitly with mode 0755, since bubblewrap makes them 0700 and a
 * command that runs as another uid than bubblewrap (rein is root) could not pass them. A folder inside a bound host
 * directory exists already; one that is itself a mount target is made by its mount.
 */
const foldersOnTheWay = (system: readonly SandboxMount[], layered: readonly SandboxMount[]): SandboxMount[] => {
  const targets = [...system, ...layered].map((mount) => mount.target);
  const bound = [...system, ...layered].filter((mount) => mount.kind === 'bind' || mount.kind === 'ro-bind' || mount.kind === 'symlink' || mount.kind === 'mask-directory').map((mount) => mount.target);
  const folders = new Set<string>();
  for (const target of targets) {
    for (let folder = dirname(target); folder !== '/' && folder !== '.'; folder = dirname(folder)) {
      if (targets.includes(folder) || bound.some((root) => isInside(root, folder))) continue;
      folders.add(folder);
    }
  }
  return [...folders].map((target) => ({ kind: 'dir' as const, target, why: 'a folder on the way to a mount: searchable by the command' }));
};

/**
 * The parts of `/proc` that are not about the sandbox's own processes but the whole machine's kernel: bound read-only
 * (the sysctls of `/proc/sys` — `kernel.core_pattern` names a program the kernel runs as root on the host —,
 * `sysrq-trigger`, `irq`, `bus`, `fs`) or hidden (kernel memory, keys, timers, the kernel log, hardware). Only those
 * the host has are listed.
 */
export const kernelReadOnly: readonly string[] = Object.freeze(['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs']);
export const kernelHidden: readonly string[] = Object.freeze(['/proc/kcore', '/proc/kmsg', '/proc/keys', '/proc/key-users', '/proc/timer_list', '/proc/sched_debug', '/proc/latency_stats', '/proc/mtrr', '/proc/acpi', '/proc/scsi', '/proc/asound', '/proc/driver']);

const kernelMounts = (host: HostFiles): SandboxMount[] => [
  ...kernelReadOnly.flatMap((path): SandboxMount[] => {
    const kind = host.kind(path);
    return kind === 'directory' || kind === 'file' ? [{ kind: 'ro-bind', source: path, target: path, why: 'kernel settings of the whole machine: read-only' }] : [];
  }),
  ...kernelHidden.flatMap((path): SandboxMount[] => {
    const kind = host.kind(path);
    if (kind === 'directory') return [{ kind: 'mask-directory', target: path, why: 'kernel state of the whole machine: hidden' }];
    return kind === 'file' ? [{ kind: 'mask-file', target: path, why: 'kernel state of the whole machine: hidden' }] : [];
  }),
];

/** Namespace and privilege flags: own pid, ipc and uts namespaces, a new session, no capabilities, dies with rein. */
export const isolationFlags = (options: { network: boolean }): string[] => [
  '--die-with-parent',
  '--new-session',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  ...(options.network ? [] : ['--unshare-net']),
  '--cap-drop',
  'ALL',
];

/** The bubblewrap arguments for a profile (everything before `--`). */
export const bwrapArguments = (mounts: readonly SandboxMount[], options: { network: boolean; cwd: string }): string[] => [
  ...isolationFlags(options),
  ...mounts.flatMap((mount): string[] => {
    switch (mount.kind) {
      case 'ro-bind':
        return ['--ro-bind', mount.source, mount.target];
      case 'bind':
        return ['--bind', mount.source, mount.target];
      case 'symlink':
        return ['--symlink', mount.link, mount.target];
      case 'tmpfs':
        return [...(mount.mode ? ['--perms', mount.mode] : []), ...(mount.sizeMb === undefined ? [] : ['--size', String(mount.sizeMb * 1024 * 1024)]), '--tmpfs', mount.target];
      case 'remount-ro':
        return ['--remount-ro', mount.target];
      case 'dir':
        return ['--perms', '0755', '--dir', mount.target];
      case 'proc':
        return ['--proc', mount.target];
      case 'dev':
        return ['--dev', mount.target];
      case 'mask-file':
        return ['--ro-bind', '/dev/null', mount.target];
      case 'mask-directory':
        return ['--tmpfs', mount.target, '--remount-ro', mount.target];
    }
  }),
  '--chdir',
  options.cwd,
];

/**
 * The home directory commands get: `$HOME` by real path, or `/root` / `/home/rein` when it is unset — or names no
 * directory that exists: bubblewrap mounts the empty home at that path, and a path under a read-only system folder
 * (`/usr/local/nohome`) cannot be made there, which would make every sandbox fail.
 */
export const sandboxHome = (): string => {
  const home = process.env.HOME;
  const unset = process.getuid?.() === 0 ? '/root' : '/home/rein';
  if (!home) return unset;
  try {
    return realpathSync.native(home);
  } catch {
    return unset;
  }
};

/**
 * The installation directory of the Node.js running rein (`<prefix>` of `<prefix>/bin/node`), so `node` and `npm`
 * work inside the sandbox when Node lives outside the system directories (nvm, a CI tool cache).
 */
export const runtimeDirectory = (): string => {
  try {
    return dirname(dirname(realpathSync.native(process.execPath)));
  } catch {
    return dirname(dirname(process.execPath));
  }
};
