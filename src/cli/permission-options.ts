import { PermissionMode } from '../../models/permission.records.js';
import { ReinError } from '../host/host-errors.js';
import type { PermissionsConfig } from '../policy/permission-policy.js';
import { parseRule } from '../policy/permission-rules.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { mergeSandboxConfig, SandboxConfig } from '../policy/sandbox-config.js';
import type { PermissionOptions } from './command-options.js';

export type { PermissionOptions } from './command-options.js';

/** The permission configuration the flags describe; a bad mode or rule is a usage error. */
export const permissionsOf = (options: PermissionOptions): PermissionsConfig => {
  const mode = options.mode === undefined ? undefined : PermissionMode.safeParse(options.mode);
  if (mode && !mode.success) throw new ReinError('USAGE', `--mode must be default, plan or accept-edits, got ${JSON.stringify(options.mode)}`);
  return {
    ...(mode?.success ? { mode: mode.data } : {}),
    rules: [
      ...(options.deny ?? []).map((rule) => ({ ...parseRule(rule, 'deny'), action: 'deny' as const, source: 'rule' as const })),
      ...(options.approve ?? []).map((rule) => ({ ...parseRule(rule, 'allow'), action: 'allow' as const, source: 'pre-approved' as const })),
    ],
    approveAll: Boolean(options.yes),
  };
};

/**
 * The sandbox settings: the flags over the `sandbox` object of `rein.config.json`. A bad mode, network policy or
 * host name is a usage error.
 */
export const sandboxOf = (options: PermissionOptions, file?: SandboxConfig): Partial<SandboxPolicy> => {
  const flags = SandboxConfig.safeParse({
    ...(options.sandbox === undefined ? {} : { mode: options.sandbox }),
    ...(options.network === undefined ? {} : { network: options.network }),
    ...(options.allowHost === undefined ? {} : { allowedHosts: options.allowHost }),
    ...(options.loginShell ? { loginShell: true } : {}),
  });
  if (!flags.success) {
    const issue = flags.error.issues[0]!;
    const flag = { mode: '--sandbox', network: '--network', allowedHosts: '--allow-host', loginShell: '--login-shell' }[String(issue.path[0]) as 'mode'] ?? 'a sandbox flag';
    throw new ReinError('USAGE', `${flag}: ${issue.message} (--sandbox auto|required|off, --network disabled|allow-list|allow-all, --allow-host <name>)`);
  }
  return mergeSandboxConfig(flags.data, file);
};
