import { isBudgetSpentValue } from '../../machines/session.machine.js';
import { budgetRaiseRefusalOf, spentBudgetsOf, type BudgetRaise } from '../../machines/session/session-budget.js';
import type { MachineTree } from '../host/machine-tree.js';
import { ReinError } from '../host/host-errors.js';

/** The limits a resume's `budgets` option gives (undefined when it gives none: no raise). */
export const raiseOf = (budgets: BudgetRaise | undefined): BudgetRaise | undefined => {
  if (!budgets) return undefined;
  const raise: BudgetRaise = {
    ...(budgets.maxTurns === undefined ? {} : { maxTurns: budgets.maxTurns }),
    ...(budgets.maxToolCalls === undefined ? {} : { maxToolCalls: budgets.maxToolCalls }),
    ...(budgets.maxTokens === undefined ? {} : { maxTokens: budgets.maxTokens }),
    ...(budgets.maxWallTimeMs === undefined ? {} : { maxWallTimeMs: budgets.maxWallTimeMs }),
  };
  return Object.keys(raise).length > 0 ? raise : undefined;
};

/**
 * Refuse (`BUDGET_NOT_RAISED`, before anything is recorded) a raise that cannot let the session go on: the root ended
 * other than on a spent budget (completed, failed, cancelled: nothing is left to run); a limit is not a whole number
 * above what is spent; or, with the raise applied, a budget is still spent — one not given, a spent tool-call budget
 * without `maxToolCalls`, or the wall time measured by the clock now (`elapsedMs`, since the session was created: its
 * next model call would end it again). A session that has not ended (interrupted: resumed while its root is `idle` or
 * `running`) takes the raise in place.
 */
export const refuseBudgetRaise = (sessionId: string, tree: Pick<MachineTree, 'value' | 'context' | 'done'>, raise: BudgetRaise, now: { elapsedMs: number }): void => {
  const refuse = (why: string) => new ReinError('BUDGET_NOT_RAISED', `session ${sessionId}: ${why}; nothing was recorded`);
  const { context } = tree;
  if (tree.done && !isBudgetSpentValue(tree.value)) throw refuse(`it ended ${context.outcome ?? JSON.stringify(tree.value)}: only a session that ended budget-exhausted, or one interrupted before it ended, has a budget to raise`);
  const refusal = budgetRaiseRefusalOf(context, raise);
  if (refusal) throw refuse(refusal);
  if (context.tally.toolCallBudgetSpent !== null && raise.maxToolCalls === undefined) throw refuse(`its tool-call budget is spent (${context.tally.toolCallBudgetSpent}): raise it too (--max-tool-calls)`);
  const budgets = { ...context.budgets, ...raise };
  const spent = spentBudgetsOf(context);
  const wallTimeMs = Math.max(spent.wallTimeMs, now.elapsedMs - context.startedAtMs);
  if (spent.turns >= budgets.maxTurns) throw refuse(`its turn budget is still spent (maxTurns ${budgets.maxTurns}, ${spent.turns} taken): raise it too (--max-turns)`);
  if (spent.tokens >= budgets.maxTokens) throw refuse(`its token budget is still spent (maxTokens ${budgets.maxTokens}, ${spent.tokens} used): raise it too (--max-tokens)`);
  if (wallTimeMs >= budgets.maxWallTimeMs) throw refuse(`its wall-time budget is spent (maxWallTimeMs ${budgets.maxWallTimeMs}, ${wallTimeMs} ms since it started): raise it too (--max-wall-time)`);
};
