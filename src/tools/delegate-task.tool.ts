import { DelegateTaskArguments, type DelegationPlan } from '../../models/delegation.records.js';
import { resolvePlan } from '../delegation/resolve-plan.js';
import { defineTool, type ToolNote } from './tool.js';

const description = [
  'Hand self-contained sub-tasks to child agents, run in parallel; the result is their structured reports (never transcripts). join decides when it returns (default all; quorum needs k).',
  'context_mode: summary (default), clean (the task only) or fork (your recent conversation).',
  'Children never get more rights than you; their approvals go to the person.',
].join(' ');

/**
 * `delegate_task`: the task package goes through the normal tool pipeline. Runtime validation (`prepare`) records
 * `delegation.proposed` and `delegation.validated` and resolves the plan under the calling agent's rights ceiling —
 * or refuses it before any child starts (`InvalidInput` for a validation failure, `Denied` for a capability failure,
 * with the options). Executing does not run anything: the call's effect settles with `delegation.accepted` carrying
 * the plan, the session machine spawns the delegation actor, and the join is the call's terminal result.
 */
export const delegateTaskTool = defineTool<DelegateTaskArguments, DelegationPlan>({
  name: 'delegate_task',
  description,
  parameters: DelegateTaskArguments,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'delegate',
  sideEffect: 'none',
  // Nothing ran before `delegation.accepted` (children start only from that input): running it again is safe.
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const notes: ToolNote[] = [{ type: 'delegation.proposed', data: { tasks: args.tasks, ...(args.join ? { join: args.join } : {}) } }];
    if (!context.delegation) return { ok: false, code: 'Denied', message: 'delegation is not available in this session', reason: 'delegation_unavailable', notes };
    const resolved = resolvePlan(args, context.delegation);
    if (!resolved.ok) {
      notes.push({ type: 'delegation.validated', data: { ok: false, failureClass: resolved.failureClass, reason: resolved.reason, options: resolved.options } });
      const message = `rejected (${resolved.failureClass} failure, no child started): ${resolved.reason}. Options: ${resolved.options.map((option, index) => `(${index + 1}) ${option}`).join(' ')}`;
      return { ok: false, code: resolved.failureClass === 'validation' ? 'InvalidInput' : 'Denied', message, reason: resolved.failureClass === 'validation' ? 'delegation_invalid' : 'delegation_capability_missing', notes };
    }
    const tasks = resolved.plan.tasks.map((task) => ({ taskId: task.taskId, role: task.role, tools: task.tools, permissionMode: task.permissionMode, format: task.contract.format }));
    notes.push({ type: 'delegation.validated', data: { ok: true, tasks } });
    return { ok: true, plan: resolved.plan, subject: { target: resolved.plan.tasks.map((task) => `${task.taskId}:${task.role}`).join(',') }, intent: { tasks: tasks.map((task) => task.taskId) }, notes };
  },
  async execute(_args, _context, plan) {
    return { ok: true, output: `delegation accepted: ${plan.tasks.length} task(s), join ${plan.join.policy}`, settleWith: { type: 'delegation.accepted', data: { plan } } };
  },
});
