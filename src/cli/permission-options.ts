import { PermissionMode } from '../../models/permission.records.js';
import { ReinError } from '../host/host-errors.js';
import type { PermissionsConfig } from '../policy/permission-policy.js';
import { parseRule } from '../policy/permission-rules.js';
import type { NetworkPolicy, SandboxPolicy } from '../policy/sandbox-policy.js';
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

/** The sandbox overrides the flags describe. */
export const sandboxOf = (options: PermissionOptions): Partial<SandboxPolicy> => {
  if (options.network === undefined) return {};
  if (options.network !== 'disabled' && options.network !== 'allow-all') throw new ReinError('USAGE', `--network must be disabled or allow-all, got ${JSON.stringify(options.network)}`);
  return { network: options.network as NetworkPolicy };
};
