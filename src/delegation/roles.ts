import type { Budgets } from '../../models/budgets.js';
import type { DelegationRole } from '../../models/delegation.records.js';
import type { ReportFormat } from '../../models/report-contracts.js';

/** What a role may do: the tools it may get, the ones it cannot work without, its report and its default budgets. */
export interface RoleDefinition {
  /** Tools the role may get (intersected with the parent's). */
  allowed: readonly string[];
  /** Tools the role needs: a delegation that cannot give them is refused before any child starts. */
  required: readonly string[];
  /** The output contract's format when the task names none. */
  contract: ReportFormat;
  /** Budgets when the task names none (always narrowed to what the parent has left). */
  budgets: Budgets;
}

const readTools = ['read', 'list_dir', 'glob', 'grep', 'read_artifact', 'update_plan'] as const;

const explorerBudgets: Budgets = { maxTurns: 12, maxToolCalls: 40, maxTokens: 400_000, maxWallTimeMs: 10 * 60 * 1000 };

/**
 * The default roles. Explorers, reviewers and security reviewers read; testers read and run commands; workers may
 * also edit — and every one of them only within its parent's rights at that moment.
 */
export const defaultRoles: Readonly<Record<DelegationRole, RoleDefinition>> = Object.freeze({
  explorer: { allowed: readTools, required: ['read'], contract: 'finding-report', budgets: explorerBudgets },
  reviewer: { allowed: readTools, required: ['read'], contract: 'review-report', budgets: explorerBudgets },
  security: { allowed: readTools, required: ['read'], contract: 'review-report', budgets: explorerBudgets },
  tester: { allowed: [...readTools, 'bash'], required: ['bash'], contract: 'test-report', budgets: { ...explorerBudgets, maxToolCalls: 30 } },
  worker: { allowed: [...readTools, 'write', 'edit', 'edit_lines', 'apply_patch', 'bash'], required: ['read'], contract: 'patch-proposal', budgets: { ...explorerBudgets, maxTurns: 20, maxToolCalls: 60 } },
});

/** How delegation is configured (`createRein({ delegation })`); every field has a default. */
export interface DelegationConfig {
  /** How deep delegation may nest: 1 (default) lets only the root agent delegate; 3 allows grandchildren's children. */
  maxDepth: number;
  /** Most tasks one `delegate_task` call may fan out to (default 8). */
  maxFanOut: number;
  roles: Readonly<Record<DelegationRole, RoleDefinition>>;
}

export const defaultDelegationConfig: DelegationConfig = Object.freeze({ maxDepth: 1, maxFanOut: 8, roles: defaultRoles });

/** The configuration with the host's overrides applied (roles are replaced per role). */
export const delegationConfigOf = (options: Partial<Omit<DelegationConfig, 'roles'>> & { roles?: Partial<Record<DelegationRole, RoleDefinition>> } = {}): DelegationConfig => ({
  maxDepth: options.maxDepth ?? defaultDelegationConfig.maxDepth,
  maxFanOut: options.maxFanOut ?? defaultDelegationConfig.maxFanOut,
  roles: { ...defaultRoles, ...options.roles },
});
