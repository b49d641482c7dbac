import type { SandboxChecked } from '../../models/sandbox.records.js';
import { sandboxEnforcement } from './sandbox-probe.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/** The `sandbox.checked` fact for a policy on this machine: the enforcement the start-up probe found, and why. */
export const sandboxCheckedOf = async (policy: SandboxPolicy): Promise<SandboxChecked> => {
  const status = await sandboxEnforcement(policy);
  return {
    enforcement: status.enforcement,
    mode: policy.mode,
    network: policy.network,
    ...(policy.network === 'allow-list' ? { allowedHosts: [...policy.allowedHosts] } : {}),
    ...(status.enforcement === 'fallback' ? { reason: status.reason } : {}),
  };
};

/** One line for people: `sandbox: bubblewrap · network disabled` or `sandbox: fallback (reason) · …`. */
export const sandboxLine = (checked: SandboxChecked): string => {
  const network = checked.network === 'allow-list' ? `network allow-list (${checked.allowedHosts?.join(', ') || 'no hosts'})` : `network ${checked.network}`;
  if (checked.enforcement === 'bubblewrap') return `sandbox: bubblewrap · ${network}`;
  const refusal = checked.mode === 'required' ? ' — bash is refused (mode required)' : '';
  return `sandbox: fallback, not isolated (${checked.reason ?? 'no reason given'})${refusal} · ${network}`;
};
