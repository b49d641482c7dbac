import { ReinError } from '../host/host-errors.js';
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
  const cost = costFlag(options.maxCost);
  if (cost !== undefined) budgets.maxCostUsd = cost;
  return budgets;
};

/**
 * `--max-cost <usd>`: a decimal number of US dollars above 0 (`5`, `0.25`, `.5`); anything else (`1e3`, `$5`, `-1`, `0`)
 * is `USAGE`.
 */
export const costFlag = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = /^(\d+(\.\d*)?|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
  if (!(Number.isFinite(parsed) && parsed > 0)) throw new ReinError('USAGE', `--max-cost must be a number of US dollars above 0 (such as 5 or 0.25), got ${JSON.stringify(value)}`);
  return parsed;
};
