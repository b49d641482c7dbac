import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { programIdentity, probeKey } from '../../src/policy/probe-key.js';
import { probeSeccomp } from '../../src/policy/sandbox-hardening.js';
import { detectIsolation } from '../../src/policy/sandbox-policy.js';
import { probeBubblewrap } from '../../src/policy/sandbox-probe.js';
import { commandWatchdog } from '../../src/tools/command-watchdog.js';
import { requireBubblewrap, requireWatchdog } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';

type TempDir = Awaited<ReturnType<typeof makeTempDir>>;

const refusing = '#!/bin/sh\necho "$(basename "$0"): Operation not permitted" >&2\nexit 1\n';
const sandboxed = await requireBubblewrap();
const watchdog = requireWatchdog();

const standIns = async (dir: TempDir, names: readonly string[]): Promise<string> => {
  const bin = join(dir.path, 'bin');
  await mkdir(bin, { recursive: true });
  for (const name of names) {
    await writeFile(join(bin, name), refusing);
    await chmod(join(bin, name), 0o755);
  }
  return bin;
};

const saved = process.env.PATH;
let dir: TempDir | undefined;
afterEach(async () => {
  process.env.PATH = saved;
  await dir?.remove();
  dir = undefined;
});

describe('the sandbox probes are kept per program PATH resolves, not per name', () => {
  it('a name resolves to the first executable on PATH; a stand-in, a replaced file and a missing program are other keys', async () => {
    dir = await makeTempDir('rein-probe-key-');
    const bin = await standIns(dir, ['bwrap']);
    const real = programIdentity('sh');
    expect(real).toMatch(/^\/.*@\d+:\d+:/);
    expect(programIdentity('bwrap', `${bin}:/usr/bin:/bin`)).toContain(join(bin, 'bwrap'));
    const before = programIdentity('bwrap', bin);
    await writeFile(join(bin, 'bwrap'), `${refusing}# changed\n`);
    expect(programIdentity('bwrap', bin)).not.toBe(before);
    // A symlink to the same file is the same program; a folder or a file that is not executable is skipped.
    await mkdir(join(bin, 'sub'));
    await symlink(join(bin, 'bwrap'), join(bin, 'sub', 'bwrap'));
    expect(programIdentity('bwrap', join(bin, 'sub'))).toBe(programIdentity('bwrap', bin));
    await writeFile(join(bin, 'sub', 'plain'), 'x');
    expect(programIdentity('plain', join(bin, 'sub'))).toBe('missing:plain');
    expect(programIdentity('no-such-program-here', bin)).toBe('missing:no-such-program-here');
    expect(probeKey(['sh'], ['a'])).not.toBe(probeKey(['sh'], ['b']));
  });

  it.runIf(sandboxed)('a failing bwrap first on PATH gets its own probe, and the real one keeps its answer', async () => {
    expect((await probeBubblewrap()).available).toBe(true);
    dir = await makeTempDir('rein-probe-key-');
    process.env.PATH = `${await standIns(dir, ['bwrap'])}:${saved ?? '/usr/bin:/bin'}`;
    const standIn = await probeBubblewrap();
    expect(standIn).toMatchObject({ available: false, reason: expect.stringContaining('Operation not permitted') });
    expect(await probeSeccomp()).toMatchObject({ available: false });
    process.env.PATH = saved;
    expect((await probeBubblewrap()).available).toBe(true);
    expect((await probeSeccomp()).available).toBe(true);
  });

  it('refusing unshare and a missing perl on PATH change what the fallback finds, for that PATH only', async () => {
    const support = detectIsolation();
    dir = await makeTempDir('rein-probe-key-');
    process.env.PATH = `${await standIns(dir, ['unshare'])}:${saved ?? '/usr/bin:/bin'}`;
    expect(detectIsolation().networkOff).toBeNull();
    process.env.PATH = saved;
    expect(detectIsolation()).toBe(support);
    if (!watchdog) return;
    const found = commandWatchdog();
    expect(found.prefix).not.toBeNull();
    process.env.PATH = join(dir.path, 'bin');
    expect(commandWatchdog()).toMatchObject({ prefix: null, reason: expect.stringContaining('perl is not installed') });
    process.env.PATH = saved;
    expect(commandWatchdog()).toBe(found);
  });
});
