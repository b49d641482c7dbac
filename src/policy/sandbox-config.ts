import { z } from 'zod';
import type { SandboxPolicy } from './sandbox-policy.js';

/** A host name the allow-list accepts: a DNS name, `*.` and a domain, an IPv4 address or a bracketed IPv6 one. */
export const AllowedHost = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$|^\[[0-9A-Fa-f:.]+\]$/, 'a host name such as registry.npmjs.org, *.example.com, 127.0.0.1 or [::1]');

/**
 * The `sandbox` object of `rein.config.json`, `createRein({ sandbox })` and the CLI flags (`--sandbox`, `--network`,
 * `--allow-host`, `--login-shell`): how commands are isolated and what network they get.
 */
export const SandboxConfig = z
  .object({
    mode: z.enum(['auto', 'required', 'off']).optional(),
    network: z.enum(['disabled', 'allow-list', 'allow-all']).optional(),
    allowedHosts: z.array(AllowedHost).max(200).optional(),
    loginShell: z.boolean().optional(),
  })
  .strict();
export type SandboxConfig = z.infer<typeof SandboxConfig>;

/**
 * Merge sandbox settings, the first layer that sets a field winning. A layer that names hosts but no network policy
 * means `allow-list`; hosts from several layers are not combined (the winning layer's list is used).
 */
export const mergeSandboxConfig = (...given: Array<SandboxConfig | undefined>): Partial<SandboxPolicy> => {
  const layers = given.map((layer) => (layer?.allowedHosts && layer.allowedHosts.length > 0 && layer.network === undefined ? { ...layer, network: 'allow-list' as const } : layer));
  const pick = <K extends keyof SandboxConfig>(key: K): SandboxConfig[K] | undefined => layers.find((layer) => layer?.[key] !== undefined)?.[key];
  const mode = pick('mode');
  const allowedHosts = pick('allowedHosts');
  const network = pick('network');
  const loginShell = pick('loginShell');
  return {
    ...(mode ? { mode } : {}),
    ...(network ? { network } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
    ...(loginShell !== undefined ? { loginShell } : {}),
  };
};
