import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { probeKey } from './probe-key.js';
import { bwrapArguments, sandboxHome, sandboxMounts } from './sandbox-profile.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/** What the start-up probe found: bubblewrap works here, or why it does not. */
export type BubblewrapProbe = { available: true; binary: string } | { available: false; binary: string; reason: string };

/** The enforcement in effect for a policy: the OS sandbox, or the fallback measures and why. */
export type SandboxEnforcement = { enforcement: 'bubblewrap' } | { enforcement: 'fallback'; reason: string };

const probes = new Map<string, Promise<BubblewrapProbe>>();

const firstLine = (text: string): string => text.trim().split('\n')[0]?.slice(0, 300) ?? '';

/**
 * Whether bubblewrap's complaint is the kernel refusing a namespace (then "user namespaces may be disabled" is the likely
 * cause): not a mount it could not make, which it names itself.
 */
const namespaceRefusal = (stderr: string): boolean => /namespace|clone|unshare|Operation not permitted|setting up uid map|No permissions to create/i.test(stderr) || stderr.trim() === '';

/**
 * Find out once per process (per program and user, below) whether bubblewrap can build a sandbox here, by running `/bin/true` in one shaped like
 * the real profile (own pid and network namespaces, no capabilities, system directories read-only). This is a real
 * attempt, not a look for the binary: a missing binary and refused user namespaces both fail it, with the reason.
 * The answer is kept per program the name resolves to (on PATH, now), user, scratch folder and home (`probeKey`).
 */
export const probeBubblewrap = (binary = 'bwrap'): Promise<BubblewrapProbe> => {
  const scratch = tmpdir();
  const home = sandboxHome();
  const key = probeKey([binary], [scratch, home]);
  let probe = probes.get(key);
  if (!probe) {
    probe = new Promise<BubblewrapProbe>((resolve) => {
      const argv = bwrapArguments(sandboxMounts({ workspace: scratch, workspaceWritable: false, protectedPaths: [], home }), { network: false, cwd: '/' });
      let stderr = '';
      const child = spawn(binary, [...argv, '--', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ available: false, binary, reason: error.code === 'ENOENT' ? `bubblewrap (${binary}) is not installed` : `bubblewrap could not start: ${error.message}` });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve({ available: true, binary });
        else resolve({ available: false, binary, reason: `bubblewrap cannot build a sandbox here (${firstLine(stderr) || (signal ? `killed by ${signal}` : `exit ${code}`)})${namespaceRefusal(stderr) ? '; user namespaces may be disabled' : ''}` });
      });
    });
    probes.set(key, probe);
  }
  return probe;
};

/** The enforcement a policy gets on this machine: `off` never sandboxes; `auto` and `required` use the probe. */
export const sandboxEnforcement = async (policy: Pick<SandboxPolicy, 'mode' | 'bubblewrap'>): Promise<SandboxEnforcement> => {
  if (policy.mode === 'off') return { enforcement: 'fallback', reason: 'the sandbox is off (mode "off")' };
  const probe = await probeBubblewrap(policy.bubblewrap);
  return probe.available ? { enforcement: 'bubblewrap' } : { enforcement: 'fallback', reason: probe.reason };
};
