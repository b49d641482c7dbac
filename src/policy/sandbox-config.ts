import * as z from 'zod';
import type { SandboxPolicy } from './sandbox-policy.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** A host name the allow-list accepts: a DNS name, `*.` and a domain, an IPv4 address or a bracketed IPv6 one. */
export const AllowedHost = lazySchema(() => z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$|^\[[0-9A-Fa-f:.]+\]$/, 'a host name such as registry.npmjs.org, *.example.com, 127.0.0.1 or [::1]'));

/**
 * The resource limits of the `sandbox` object, with the flags that set them: the processes a command may have at
 * once (`RLIMIT_NPROC`), each process's data segment, and the size of each private tmpfs it can write.
 */
export const sandboxLimits = Object.freeze({
  maxProcesses: { flag: '--max-processes', min: 1, max: 1_000_000, what: 'the process limit' },
  maxMemoryMb: { flag: '--max-memory-mb', min: 16, max: 1_048_576, what: 'the memory limit (MB)' },
  maxTmpMb: { flag: '--max-tmp-mb', min: 1, max: 1_048_576, what: 'the size of /tmp (MB)' },
} as const);
export type SandboxLimit = keyof typeof sandboxLimits;

const limit = (name: SandboxLimit) => z.number().int().min(sandboxLimits[name].min).max(sandboxLimits[name].max).optional();

/**
 * The `sandbox` object of `rein.config.json`, `createRein({ sandbox })` and the CLI flags (`--sandbox`, `--network`,
 * `--allow-host`, `--login-shell`, `--max-processes`, `--max-memory-mb`, `--max-tmp-mb`): how commands are isolated,
 * what network they get and what they may consume.
 */
export const SandboxConfig = lazySchema(() => z
  .object({
    mode: z.enum(['auto', 'required', 'off']).optional(),
    network: z.enum(['disabled', 'allow-list', 'allow-all']).optional(),
    allowedHosts: z.array(AllowedHost).max(200).optional(),
    loginShell: z.boolean().optional(),
    maxProcesses: limit('maxProcesses'),
    maxMemoryMb: limit('maxMemoryMb'),
    maxTmpMb: limit('maxTmpMb'),
  })
  .strict());
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
  const limits: Partial<Record<SandboxLimit, number>> = {};
  for (const name of Object.keys(sandboxLimits) as SandboxLimit[]) {
    const value = pick(name);
    if (value !== undefined) limits[name] = value;
  }
  return {
    ...(mode ? { mode } : {}),
    ...(network ? { network } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
    ...(loginShell !== undefined ? { loginShell } : {}),
    ...limits,
  };
};
