import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Session budgets, enforced by the session machine's guards. */
export const Budgets = lazySchema(() => z.object({
  maxTurns: z.number().int().positive(),
  maxToolCalls: z.number().int().nonnegative(),
  maxTokens: z.number().int().positive(),
  maxWallTimeMs: z.number().int().positive(),
  /**
   * The most the whole session tree (children share the root's) may spend on model calls, in US dollars: checked by
   * the runtime before each call against the recorded spend plus the call's worst case (docs/model-input.md, "The cost budget"). Absent: none.
   */
  maxCostUsd: z.number().positive().finite().optional(),
}));
export type Budgets = z.infer<typeof Budgets>;

/**
 * A child agent's budgets: its share of what its parent had left when it delegated, which may be nothing (a child
 * with no turn left ends `budget-exhausted` before its first model call).
 */
export const ChildBudgets = lazySchema(() => Budgets.extend({
  maxTurns: z.number().int().nonnegative(),
  maxTokens: z.number().int().nonnegative(),
}));
export type ChildBudgets = z.infer<typeof ChildBudgets>;

/** The budgets a session gets when nothing else is configured. */
export const defaultBudgets: Budgets = Object.freeze({
  maxTurns: 100,
  maxToolCalls: 500,
  maxTokens: 2_000_000,
  maxWallTimeMs: 30 * 60 * 1000,
});

/** What a session has consumed so far; compared with `Budgets` by the guards. */
export const Usage = lazySchema(() => z.object({
  turns: z.number().int().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  elapsedMs: z.number().nonnegative(),
}));
export type Usage = z.infer<typeof Usage>;

export const emptyUsage: Usage = Object.freeze({ turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0 });
