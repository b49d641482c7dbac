import * as z from 'zod';
import { PlanStep } from '../../models/plan.records.js';
import { planChecklist } from '../projections/plan-text.js';
import { defineTool, readOnlyAnnotations, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const UpdatePlanParameters = lazySchema(() => z
  .object({
    plan: z.array(PlanStep).max(50),
    explanation: z.string().max(2_000).optional().describe('Why the plan changed, in a sentence'),
  })
  .strict());
export type UpdatePlanParameters = z.infer<typeof UpdatePlanParameters>;

/**
 * `update_plan`: the model keeps its plan as data. Each call replaces the whole list (at most one step in progress,
 * else `InvalidInput`, reason `plan_invalid`); nothing outside the session changes, so it never asks. The plan is
 * recorded as a `plan.updated` fact with the call's settlement.
 */
export const updatePlanTool = defineTool<UpdatePlanParameters, undefined>({
  name: 'update_plan',
  description: 'Keep a checklist of this task\'s steps: send the whole list each time (it replaces the last one), one step in_progress at a time, steps completed as you go. Skip it for a one-step task.',
  parameters: UpdatePlanParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  async prepare(args) {
    const doing = args.plan.filter((entry) => entry.status === 'in_progress').length;
    if (doing > 1) return toolFailure('InvalidInput', `${doing} steps are in_progress; mark at most one step in_progress at a time`, 'plan_invalid');
    return { ok: true, plan: undefined };
  },
  async execute(args) {
    const done = args.plan.filter((entry) => entry.status === 'completed').length;
    const lines = planChecklist(args.plan);
    return {
      ok: true,
      output: `plan updated (${done} of ${args.plan.length} done)${lines.length > 0 ? `\n${lines.join('\n')}` : ''}`,
      notes: [{ type: 'plan.updated', data: { plan: args.plan, ...(args.explanation === undefined ? {} : { explanation: args.explanation }) } }],
    };
  },
});
