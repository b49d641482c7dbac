import type { Command } from 'commander';
import { PermissionMode } from '../../models/permission.records.js';
import { ReinError } from '../host/host-errors.js';
import type { PermissionsConfig } from '../policy/permission-policy.js';
import { parseRule } from '../policy/permission-rules.js';
import type { NetworkPolicy, SandboxPolicy } from '../policy/sandbox-policy.js';

/** Permission and sandbox flags shared by `rein run` and `rein resume`. */
export interface PermissionOptions {
  mode?: string;
  approve?: string[];
  deny?: string[];
  yes?: boolean;
  network?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Add `--mode`, `--approve <rule>` (repeatable), `--deny <rule>` (repeatable) and `--network`. */
export const addPermissionOptions = (command: Command): Command =>
  command
    .option('--mode <mode>', 'permission mode: default, plan (read-only tools only) or accept-edits')
    .option('--approve <rule>', 'answer matching approval requests with yes in advance, e.g. write or "bash:npm test" (repeatable)', collect)
    .option('--deny <rule>', 'deny matching calls, whatever the answers, e.g. "bash:git push*" (repeatable)', collect)
    .option('--network <policy>', 'network for bash: disabled (default) or allow-all');

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
