import type { Budgets } from '../../models/budgets.js';
import type { BudgetOptions } from './command-options.js';
import { positiveFlag as positive } from './whole-number-flag.js';

export type { BudgetOptions } from './command-options.js';

/** Budgets given on the command line; absent flags keep the defaults. */
export const budgetsOf = (options: BudgetOptions): Partial<Budgets> => {
  const budgets: Partial<Budgets> = {};
  const turns = positive('--max-turns', options.maxTurns);
  const toolCalls = positive('--max-tool-calls', options.maxToolCalls);
  const tokens = positive('--max-tokens', options.maxTokens);
  const wallTime = positive('--max-wall-time', options.maxWallTime);
  if (turns !== undefined) budgets.maxTurns = turns;
  if (toolCalls !== undefined) budgets.maxToolCalls = toolCalls;
  if (tokens !== undefined) budgets.maxTokens = tokens;
  if (wallTime !== undefined) budgets.maxWallTimeMs = wallTime;
  return budgets;
};
