import type { DelegationRole } from '../../models/delegation.records.js';
import type { PermissionMode } from '../../models/permission.records.js';
import type { OutputContract } from '../../models/report-contracts.js';
import type { DelegationConfig } from './roles.js';

/** What one agent may do right now: its depth, role, visible tools, permission mode and (for a child) its output contract. */
export interface ActorRights {
  path: string;
  /** 0 for the root agent, 1 for its children, and so on. */
  depth: number;
  role?: DelegationRole;
  /** The tools the agent sees (a child's `submit_report` not included). */
  tools: readonly string[];
  mode: PermissionMode;
  contract?: OutputContract;
}

/** What `delegate_task` needs to resolve a plan under the calling agent's rights ceiling. */
export interface DelegationScope {
  /** The delegating agent's rights at this moment. */
  parent: ActorRights;
  config: DelegationConfig;
  /** Whether a registered tool would be visible to a child running in `mode` (its policy's visibility). */
  isVisible(mode: PermissionMode, tool: string): boolean;
  /** The mutation policy digest of a child running in `mode`. */
  policyDigest(mode: PermissionMode): string;
  /** The parent's observation limit: the join's observation stays within it. */
  observationLimit: number;
}

const modeRank: Record<PermissionMode, number> = { plan: 0, default: 1, 'accept-edits': 2 };

/** The narrower of two permission modes (`plan` < `default` < `accept-edits`): a child never gets a mode above its parent's. */
export const narrowerMode = (parent: PermissionMode, requested: PermissionMode | undefined): PermissionMode =>
  requested === undefined || modeRank[requested] > modeRank[parent] ? parent : requested;

/** True when `mode` grants no more than `ceiling`. */
export const modeWithin = (mode: PermissionMode, ceiling: PermissionMode): boolean => modeRank[mode] <= modeRank[ceiling];
