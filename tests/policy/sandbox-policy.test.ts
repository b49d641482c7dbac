import { describe, expect, it } from 'vitest';
import { defaultSandboxPolicy, limitPrefix, networkRefusal, sandboxPrefix, unenforcedNetwork, type IsolationSupport } from '../../src/policy/sandbox-policy.js';
import { fileLimitWidening } from '../../src/cli/permission-options.js';

const everything: IsolationSupport = { shell: '/bin/bash', networkOff: ['unshare', '-n'], prlimit: 'prlimit', root: false };
const nothing: IsolationSupport = { shell: '/bin/sh', networkOff: null, prlimit: null, root: false };

describe('sandbox enforcement reporting', () => {
  it('applies prlimit and network isolation when the machine has them', () => {
    const applied = sandboxPrefix(defaultSandboxPolicy, everything);
    expect(applied.prefix).toEqual(['prlimit', '--nproc=1024', `--data=${4096 * 1024 * 1024}`, 'unshare', '-n']);
    expect(applied.network).toEqual({ enforced: true, mechanism: 'unshare -n' });
    expect(applied.processes.enforced).toBe(true);
    expect(applied.memory).toEqual({ enforced: true, mechanism: 'prlimit --data' });
  });

  it('says what is not enforced, and why, when the tools are missing', () => {
    const applied = sandboxPrefix(defaultSandboxPolicy, nothing);
    expect(applied.prefix).toEqual([]);
    expect(applied.network).toMatchObject({ enforced: false });
    expect(applied.processes).toMatchObject({ enforced: false, reason: 'prlimit is not installed' });
  });

  it('reports the process limit as not binding root, and an allow-list as not enforced', () => {
    expect(sandboxPrefix(defaultSandboxPolicy, { ...everything, root: true }).processes).toMatchObject({ enforced: false });
    const allowList = sandboxPrefix({ ...defaultSandboxPolicy, network: 'allow-list', allowedHosts: ['registry.npmjs.org'] }, everything);
    expect(allowList.network).toMatchObject({ enforced: false });
    expect(allowList.prefix).not.toContain('unshare');
    expect(sandboxPrefix({ ...defaultSandboxPolicy, network: 'allow-all' }, everything).prefix).not.toContain('unshare');
  });

  it('binds the process limit for root only when the command runs as an unprivileged uid of its own', () => {
    expect(limitPrefix(defaultSandboxPolicy, { ...everything, root: true }).processes).toMatchObject({ enforced: false, reason: 'RLIMIT_NPROC does not bind root' });
    expect(limitPrefix(defaultSandboxPolicy, { ...everything, root: true }, { unprivileged: true }).processes).toEqual({ enforced: true, mechanism: 'prlimit --nproc, as an unprivileged uid of its own' });
    expect(limitPrefix({ ...defaultSandboxPolicy, maxProcesses: 64 }, everything).prefix).toContain('--nproc=64');
  });

  it('a network policy nothing enforces is said so, and refuses commands unless the sandbox is off or the network open (issue #25 §5)', () => {
    expect(unenforcedNetwork(defaultSandboxPolicy, everything)).toBeNull();
    expect(unenforcedNetwork(defaultSandboxPolicy, nothing)).toContain('the network is open');
    expect(unenforcedNetwork({ network: 'allow-all' }, nothing)).toBeNull();
    expect(networkRefusal(defaultSandboxPolicy, nothing)).toContain('--sandbox off');
    expect(networkRefusal({ network: 'allow-list', mode: 'auto' }, nothing)).toContain('"allow-list"');
    expect(networkRefusal({ network: 'disabled', mode: 'off' }, nothing)).toBeNull();
    expect(networkRefusal({ network: 'allow-all', mode: 'auto' }, nothing)).toBeNull();
    expect(networkRefusal(defaultSandboxPolicy, everything)).toBeNull();
    expect(sandboxPrefix(defaultSandboxPolicy, nothing).network).toEqual({ enforced: false, reason: unenforcedNetwork(defaultSandboxPolicy, nothing) });
  });

  it('a workspace file may lower a limit; raising one is the flag\'s to say', () => {
    expect(fileLimitWidening({}, { maxProcesses: 64, maxTmpMb: 8, maxMemoryMb: 512 })).toEqual([]);
    expect(fileLimitWidening({}, { maxProcesses: 5000 })).toEqual(['raises the process limit to 5000, above the default 1024 (confirm with --max-processes 5000)']);
    expect(fileLimitWidening({ maxProcesses: 5000 }, { maxProcesses: 5000 })).toEqual([]);
    expect(fileLimitWidening({}, { maxTmpMb: 2048, maxMemoryMb: 8192 })).toHaveLength(2);
  });
});
