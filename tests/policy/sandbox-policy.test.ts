import { describe, expect, it } from 'vitest';
import { defaultSandboxPolicy, sandboxPrefix, type IsolationSupport } from '../../src/policy/sandbox-policy.js';

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
});
