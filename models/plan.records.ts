import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Where one step of a model's plan stands. */
export const PlanStatus = lazySchema(() => z.enum(['pending', 'in_progress', 'completed']));
export type PlanStatus = z.infer<typeof PlanStatus>;

/** One step of the plan a model keeps with `update_plan`. */
export const PlanStep = lazySchema(() => z.object({ step: z.string().min(1).max(500), status: PlanStatus }).strict());
export type PlanStep = z.infer<typeof PlanStep>;

/**
 * effect (fact) · the model replaced its plan with `update_plan` (the whole list each time; at most one step in
 * progress). The live display, `rein show`, the trace and ACP `plan` updates read it.
 */
export const PlanUpdated = lazySchema(() => z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  plan: z.array(PlanStep).max(50),
  explanation: z.string().max(2_000).optional(),
}));
export type PlanUpdated = z.infer<typeof PlanUpdated>;
