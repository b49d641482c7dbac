/*
 * A model's plan (`update_plan`, recorded as `plan.updated`) as a person reads it. Zod-free: `rein show` and the live
 * display load it.
 */

/** One step of a plan as recorded. */
export interface PlanStepText {
  step: string;
  status: string;
}

/** The plan as a compact checklist, one line per step: `[x] done`, `[>] doing`, `[ ] to do`. */
export const planChecklist = (plan: readonly PlanStepText[]): string[] =>
  plan.map((entry) => `${entry.status === 'completed' ? '[x]' : entry.status === 'in_progress' ? '[>]' : '[ ]'} ${entry.step}`);

/** The plan on one line: `plan (1 of 3 done): [x] read · [>] fix · [ ] test — why it changed`. */
export const planLine = (data: Record<string, unknown>): string => {
  const plan = Array.isArray(data.plan) ? (data.plan as PlanStepText[]) : [];
  const done = plan.filter((entry) => entry.status === 'completed').length;
  const why = typeof data.explanation === 'string' && data.explanation !== '' ? ` — ${data.explanation}` : '';
  return `plan (${done} of ${plan.length} done): ${planChecklist(plan).join(' · ') || '(empty)'}${why}`;
};
