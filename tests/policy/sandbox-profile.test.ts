import { describe, expect, it } from 'vitest';
import { bwrapArguments, sandboxMounts, type HostFiles } from '../../src/policy/sandbox-profile.js';
import { mergeSandboxConfig, SandboxConfig } from '../../src/policy/sandbox-config.js';

/** A Debian-like host: /bin, /lib, /lib64 and /sbin are symlinks into /usr; /lib32 and /libx32 do not exist. */
const debian: HostFiles = {
  kind(path) {
    if (['/bin', '/sbin', '/lib', '/lib64'].includes(path)) return { symlink: `usr${path}` };
    if (['/usr', '/etc', '/work/ws', '/work/ws/.rein'].includes(path)) return 'directory';
    if (path === '/work/ws/rein.config.json') return 'file';
    // The kernel's view of the whole machine under /proc: a few of each kind, others absent on this host.
    if (['/proc/sys', '/proc/irq', '/proc/acpi'].includes(path)) return 'directory';
    if (['/proc/sysrq-trigger', '/proc/kcore'].includes(path)) return 'file';
    return 'missing';
  },
};

describe('the sandbox profile', () => {
  const mounts = sandboxMounts({ workspace: '/work/ws', workspaceWritable: true, protectedPaths: ['/work/ws/.rein', '/work/ws/rein.config.json', '/elsewhere/store'], home: '/root', tmpSizeMb: 64 }, debian);

  it('binds exactly the system directories, a private /tmp, an empty home, the workspace and masks, /proc and /dev', () => {
    expect(mounts.map((mount) => [mount.kind, mount.target])).toEqual([
      ['ro-bind', '/usr'],
      ['symlink', '/bin'],
      ['symlink', '/sbin'],
      ['symlink', '/lib'],
      ['symlink', '/lib64'],
      ['ro-bind', '/etc'],
      ['tmpfs', '/tmp'],
      ['tmpfs', '/root'],
      ['dir', '/work'],
      ['bind', '/work/ws'],
      ['mask-directory', '/work/ws/.rein'],
      ['mask-file', '/work/ws/rein.config.json'],
      ['proc', '/proc'],
      ['ro-bind', '/proc/sys'],
      ['ro-bind', '/proc/sysrq-trigger'],
      ['ro-bind', '/proc/irq'],
      ['mask-file', '/proc/kcore'],
      ['mask-directory', '/proc/acpi'],
      ['dev', '/dev'],
      ['tmpfs', '/dev/shm'],
      ['remount-ro', '/dev'],
      ['remount-ro', '/'],
    ]);
    for (const mount of mounts) expect(mount.why.length).toBeGreaterThan(5);
  });

  it('bounds every writable tmpfs, and makes the home writable by everyone only for a command of another uid', () => {
    const tmpfs = mounts.filter((mount) => mount.kind === 'tmpfs');
    expect(tmpfs.map((mount) => [mount.target, mount.sizeMb, mount.mode])).toEqual([['/tmp', 64, '1777'], ['/root', 64, '0700'], ['/dev/shm', 64, '1777']]);
    const argv = bwrapArguments(mounts, { network: false, cwd: '/work/ws' }).join(' ');
    expect(argv).toContain(`--perms 1777 --size ${64 * 1024 * 1024} --tmpfs /tmp`);
    expect(argv).toContain('--ro-bind /proc/sys /proc/sys');
    expect(argv).toContain('--ro-bind /dev/null /proc/kcore');
    expect(argv).toContain('--perms 0755 --dir /work --bind /work/ws /work/ws');
    expect(argv).toMatch(/--remount-ro \/dev --remount-ro \/ --chdir/);
    const foreign = sandboxMounts({ workspace: '/work/ws', workspaceWritable: true, protectedPaths: [], home: '/root', foreignUser: true }, debian);
    expect(foreign.find((mount) => mount.target === '/root')).toMatchObject({ kind: 'tmpfs', mode: '0777' });
    expect(foreign.find((mount) => mount.target === '/tmp')).not.toHaveProperty('sizeMb');
  });

  it('orders mounts so an outer one never hides an inner one (a workspace under /tmp, a home inside the workspace)', () => {
    const underTmp = sandboxMounts({ workspace: '/tmp/x/ws', workspaceWritable: true, protectedPaths: [], home: '/tmp/x/ws/home' }, { kind: () => 'missing' });
    expect(underTmp.map((mount) => mount.target)).toEqual(['/tmp', '/tmp/x', '/tmp/x/ws', '/tmp/x/ws/home', '/proc', '/dev', '/dev/shm', '/dev', '/']);
  });

  it('gives the search tools a read-only workspace and their own binaries', () => {
    const search = sandboxMounts({ workspace: '/work/ws', workspaceWritable: false, protectedPaths: [], home: '/root', toolDirectories: ['/opt/rein/node_modules/rg/bin', '/usr/bin'] }, debian);
    expect(search).toContainEqual(expect.objectContaining({ kind: 'ro-bind', target: '/work/ws' }));
    expect(search.filter((mount) => mount.target === '/opt/rein/node_modules/rg/bin')).toHaveLength(1);
    expect(search.filter((mount) => mount.target === '/usr/bin')).toHaveLength(0);
  });

  it('isolates pid, ipc, uts and (unless allowed) network, drops every capability, and dies with rein', () => {
    const argv = bwrapArguments(mounts, { network: false, cwd: '/work/ws/src' });
    for (const flag of ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net']) expect(argv).toContain(flag);
    expect(argv.join(' ')).toContain('--cap-drop ALL');
    expect(argv.join(' ')).toContain('--tmpfs /work/ws/.rein --remount-ro /work/ws/.rein');
    expect(argv.join(' ')).toContain('--ro-bind /dev/null /work/ws/rein.config.json');
    expect(argv.slice(-2)).toEqual(['--chdir', '/work/ws/src']);
    expect(bwrapArguments(mounts, { network: true, cwd: '/work/ws' })).not.toContain('--unshare-net');
  });
});

describe('the sandbox object', () => {
  it('accepts the documented shape and refuses anything else', () => {
    expect(SandboxConfig.safeParse({ mode: 'required', network: 'allow-list', allowedHosts: ['registry.npmjs.org', '*.example.com', '127.0.0.1', '[::1]'], loginShell: true }).success).toBe(true);
    expect(SandboxConfig.safeParse({ maxProcesses: 64, maxMemoryMb: 1024, maxTmpMb: 8 }).success).toBe(true);
    for (const bad of [{ mode: 'strict' }, { network: 'some' }, { allowedHosts: ['bad host'] }, { allowedHosts: ['http://x.com'] }, { loginshell: true }, { maxProcesses: 0 }, { maxTmpMb: 1.5 }, { maxMemoryMb: '512' }]) expect(SandboxConfig.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it('merges layers: the first that sets a field wins, hosts without a policy mean allow-list', () => {
    expect(mergeSandboxConfig({ allowedHosts: ['a.com'] }, { network: 'disabled', mode: 'off' })).toEqual({ mode: 'off', network: 'allow-list', allowedHosts: ['a.com'] });
    expect(mergeSandboxConfig({ network: 'allow-all' }, { allowedHosts: ['a.com'] })).toEqual({ network: 'allow-all', allowedHosts: ['a.com'] });
    expect(mergeSandboxConfig(undefined, { loginShell: true })).toEqual({ loginShell: true });
    expect(mergeSandboxConfig({ maxTmpMb: 32 }, { maxTmpMb: 8, maxProcesses: 64 })).toEqual({ maxTmpMb: 32, maxProcesses: 64 });
  });
});
