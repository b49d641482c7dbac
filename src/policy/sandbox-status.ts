import type { SandboxChecked } from '../../models/sandbox.records.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * The `sandbox.checked` fact for a policy on this machine: the enforcement the start-up probe found, and why. The probe
 * (and `node:child_process` with it) loads on the first call, so the reading commands that print `sandboxLine` do not
 * load it.
 */
export const sandboxCheckedOf = async (policy: SandboxPolicy): Promise<SandboxChecked> => {
  const { sandboxEnforcement } = await import('./sandbox-probe.js');
  const { detectIsolation, unenforcedNetwork } = await import('./sandbox-policy.js');
  const status = await sandboxEnforcement(policy);
  const unenforced = status.enforcement === 'fallback' ? unenforcedNetwork(policy, detectIsolation()) : null;
  return {
    enforcement: status.enforcement,
    mode: policy.mode,
    network: policy.network,
    ...(policy.network === 'allow-list' ? { allowedHosts: [...policy.allowedHosts] } : {}),
    ...(status.enforcement === 'fallback' ? { reason: status.reason } : {}),
    ...(unenforced ? { networkNotEnforced: unenforced } : {}),
    limits: { maxProcesses: policy.maxProcesses, maxMemoryMb: policy.maxMemoryMb, maxTmpMb: policy.maxTmpMb },
  };
};

/**
 * One line for people: `sandbox: bubblewrap · network disabled` or `sandbox: fallback (reason) · …`; a network policy
 * nothing enforces says `not enforced`, and the refusal of bash that follows from it.
 */
export const sandboxLine = (checked: SandboxChecked): string => {
  const policy = checked.network === 'allow-list' ? `network allow-list (${checked.allowedHosts?.join(', ') || 'no hosts'})` : `network ${checked.network}`;
  const network = checked.networkNotEnforced ? `${policy}: not enforced (${checked.networkNotEnforced})` : policy;
  if (checked.enforcement === 'bubblewrap') return `sandbox: bubblewrap · ${network}`;
  const refusal = checked.mode === 'required' ? ' — bash is refused (mode required)' : checked.networkNotEnforced && checked.mode !== 'off' ? ' — bash is refused (the network policy cannot hold: --sandbox off or --network allow-all runs it)' : '';
  return `sandbox: fallback, not isolated (${checked.reason ?? 'no reason given'})${refusal} · ${network}`;
};
