import { resolve } from 'node:path';
import type { PermissionPolicy, PermissionSubject } from '../policy/permission-policy.js';
import { shellSubject } from '../policy/shell-subject.js';
import type { DecidePermission } from './dry-run.js';

const subjectOf = (name: string, args: Record<string, unknown>, workspace: string): PermissionSubject => {
  if (name === 'bash' && typeof args.command === 'string') {
    const cwd = typeof args.cwd === 'string' ? resolve(workspace, args.cwd) : workspace;
    return shellSubject(args.command, { workspace, cwd });
  }
  const target = typeof args.path === 'string' ? args.path : typeof args.pattern === 'string' ? args.pattern : undefined;
  return target === undefined ? {} : { target };
};

/**
 * Today's permission policy as a dry-run decision: the subject is derived from the recorded arguments (a path, or a
 * shell command classified as the bash tool classifies it), without touching the workspace. Calls that asked then
 * and were answered by a person are compared against what the policy alone would say now.
 */
export const decideWithPolicy = (policy: PermissionPolicy, workspace: string): DecidePermission => ({ name, arguments: args, tool }) => {
  if (!tool) return undefined;
  const verdict = policy.decide({ tool, subject: subjectOf(name, args, workspace) });
  return { decision: verdict.decision, reason: verdict.rule ? `${verdict.reason} (rule ${verdict.rule})` : verdict.reason };
};
