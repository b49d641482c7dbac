import type { Budgets, Usage } from '../../models/budgets.js';
import { addPools, emptyPool, type BudgetPool } from '../delegation/budget-share.js';
import type { SessionContext, SessionEvent } from '../session.contract.js';
import { isCut } from './session-reply.js';

/*
 * The session machine's budgets (machines/session.machine.ts): what an agent has spent and has left — its own turns,
 * tool calls, tokens and wall time, what its joined children spent and what its open delegations hold for theirs —
 * and the guards that stop it when a budget runs out. Pure functions of the machine's context.
 */

type GuardArgs = { context: SessionContext; event: SessionEvent };

/** The tokens a usage counts (input and output). */
export const tokensUsed = (usage: Usage): number => usage.inputTokens + usage.outputTokens;

/** What the children of this agent's open delegations were given and may still spend. */
export const reservedOf = (context: SessionContext): BudgetPool =>
  Object.values(context.outstanding).reduce((pool, effect) => (effect.reserved ? addPools(pool, effect.reserved) : pool), emptyPool);

/**
 * What is left of this agent's budgets right now — after its own turns and calls, what its children spent (charged at
 * each join) and what its open delegations hold for their children: the pool the next delegation's children share.
 */
export const remainingBudgets = (context: SessionContext): Budgets => {
  const reserved = reservedOf(context);
  return {
    maxTurns: context.budgets.maxTurns - context.usage.turns - context.tally.delegated.turns - reserved.turns,
    maxToolCalls: context.budgets.maxToolCalls - context.usage.toolCalls - context.tally.delegated.toolCalls - reserved.toolCalls,
    maxTokens: context.budgets.maxTokens - tokensUsed(context.usage) - reserved.tokens,
    maxWallTimeMs: context.budgets.maxWallTimeMs - (context.usage.elapsedMs - context.startedAtMs),
  };
};

/** The id the next effect this agent requests gets: `<path>:e<n>`. */
export const effectIdOf = (context: SessionContext): string => `${context.path}:e${context.nextEffect}`;

/** Reserving the next model call (`reserveModelCall`): its effect id, outstanding, and the turn it counts as. */
export const modelCallReservedOf = (context: SessionContext): Partial<SessionContext> => {
  const effectId = effectIdOf(context);
  // Built key by key (same keys, same order): a spread with a computed key and a conditional spread took V8's slow
  // path on every model call.
  const outstanding: SessionContext['outstanding'] = { ...context.outstanding };
  outstanding[effectId] = { kind: 'callModel' };
  const reserved: Partial<SessionContext> = { nextEffect: context.nextEffect + 1, awaitingModel: effectId, outstanding, usage: { ...context.usage, turns: context.usage.turns + 1 } };
  if (context.tally.unseenMessage) reserved.tally = { ...context.tally, unseenMessage: false };
  return reserved;
};

/** `outstanding` without `effectId` (the others in their order): a copy, not a rest pattern with a computed key. */
export const withoutEffect = (outstanding: SessionContext['outstanding'], effectId: string): SessionContext['outstanding'] => {
  const left: SessionContext['outstanding'] = {};
  for (const id in outstanding) if (id !== effectId) left[id] = outstanding[id]!;
  return left;
};

/**
 * Settling the awaited model call (`settleModelCall`): it is no longer outstanding, its tokens and elapsed time are
 * charged, and the run of cut replies is counted (reset by a reply that was not cut).
 */
export const modelCallSettledOf = (context: SessionContext, event: SessionEvent): Partial<SessionContext> => {
  if (event.type !== 'model.responded' && event.type !== 'model.failed') return {};
  const outstanding = withoutEffect(context.outstanding, event.effectId);
  const usage = event.type === 'model.responded'
    ? { ...context.usage, inputTokens: context.usage.inputTokens + event.usage.inputTokens, outputTokens: context.usage.outputTokens + event.usage.outputTokens }
    : context.usage;
  // A message the settled call did not see matters only for its answer (guards read it before this runs).
  const cutReplies = event.type === 'model.responded' ? (isCut(event) ? context.tally.cutReplies + 1 : 0) : context.tally.cutReplies;
  const tally = cutReplies === context.tally.cutReplies && !context.tally.unseenMessage ? context.tally : { ...context.tally, unseenMessage: false, cutReplies };
  return { outstanding, awaitingModel: null, usage: { ...usage, elapsedMs: Math.max(usage.elapsedMs, event.elapsedMs) }, tally };
};

/** `(4 of them spent by delegated children)`, when children spent any. */
export const delegatedNote = (spent: number, what: string): string => (spent > 0 ? ` (${spent} of them ${spent === 1 ? 'was' : 'were'} ${what} by delegated children)` : '');

/**
 * What this agent has spent of the budgets a raise may replace: its turns and tool calls (its joined children's
 * included), tokens, and the wall time its machine has seen (the newest settlement's `elapsedMs` since it started).
 */
export const spentBudgetsOf = (context: Pick<SessionContext, 'usage' | 'tally' | 'startedAtMs'>): { turns: number; toolCalls: number; tokens: number; wallTimeMs: number } => ({
  turns: context.usage.turns + context.tally.delegated.turns,
  toolCalls: context.usage.toolCalls + context.tally.delegated.toolCalls,
  tokens: tokensUsed(context.usage),
  wallTimeMs: context.usage.elapsedMs - context.startedAtMs,
});

/** A raise of the turn, tool-call, token and wall-time budgets, as `session.budgets-raised` carries it. */
export interface BudgetRaise {
  maxTurns?: number | undefined;
  maxToolCalls?: number | undefined;
  maxTokens?: number | undefined;
  maxWallTimeMs?: number | undefined;
}

const raisable = [
  { key: 'maxTurns', spent: 'turns', what: 'turn(s) already taken' },
  { key: 'maxToolCalls', spent: 'toolCalls', what: 'tool call(s) already made' },
  { key: 'maxTokens', spent: 'tokens', what: 'token(s) already used' },
  { key: 'maxWallTimeMs', spent: 'wallTimeMs', what: 'ms already taken' },
] as const;

/**
 * Why a raise cannot apply (undefined: it can): it gives no limit, or a limit that is not a whole number above what is
 * spent (`maxTurns 3 is not above the 3 turn(s) already taken`). Shared by the machine's guards and resume's check.
 */
export const budgetRaiseRefusalOf = (context: Pick<SessionContext, 'usage' | 'tally' | 'startedAtMs'>, raise: BudgetRaise): string | undefined => {
  if (raisable.every(({ key }) => raise[key] === undefined)) return 'a raise gives maxTurns, maxToolCalls, maxTokens or maxWallTimeMs';
  const spent = spentBudgetsOf(context);
  for (const { key, spent: used, what } of raisable) {
    const limit = raise[key];
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > spent[used])) return `${key} ${limit} is not above the ${spent[used]} ${what}`;
  }
  return undefined;
};

/**
 * The context once a raise applies to a session still running (or waiting): the given limits replace the ones in force.
 * A tool-call limit above what is spent also lifts the tool-call budget's verdict on the open turn (the calls it
 * refused stay refused; the join no longer ends the session for them).
 */
export const budgetLimitsRaisedOf = (context: SessionContext, raise: BudgetRaise): Partial<SessionContext> => ({
  budgets: {
    ...context.budgets,
    ...(raise.maxTurns === undefined ? {} : { maxTurns: raise.maxTurns }),
    ...(raise.maxToolCalls === undefined ? {} : { maxToolCalls: raise.maxToolCalls }),
    ...(raise.maxTokens === undefined ? {} : { maxTokens: raise.maxTokens }),
    ...(raise.maxWallTimeMs === undefined ? {} : { maxWallTimeMs: raise.maxWallTimeMs }),
  },
  ...(raise.maxToolCalls === undefined || context.tally.toolCallBudgetSpent === null ? {} : { tally: { ...context.tally, toolCallBudgetSpent: null } }),
});

/** The context once a raise applies to a spent budget's end: the limits are replaced and the end is undone. */
export const budgetsRaisedOf = (context: SessionContext, raise: BudgetRaise): Partial<SessionContext> => ({
  ...budgetLimitsRaisedOf(context, raise),
  outcome: null,
  endReason: null,
});

/** The session machine's budget guards. */
export const budgetGuards = {
  /**
   * A person raised the spent budgets above what is spent (`session.budgets-raised`). A spent tool-call budget is
   * lifted only by a tool-call limit: a raise of the others alone would end the session again at the next join.
   */
  raisesSpentBudgets: ({ context, event }: GuardArgs) =>
    event.type === 'session.budgets-raised' && budgetRaiseRefusalOf(context, event) === undefined && (context.tally.toolCallBudgetSpent === null || event.maxToolCalls !== undefined),
  /** A person replaced the limits of a session that has not ended (an interrupted one, on resume): each above what is spent. */
  raisesBudgets: ({ context, event }: GuardArgs) => event.type === 'session.budgets-raised' && budgetRaiseRefusalOf(context, event) === undefined,
  /** A call of the turn just joined was refused for the tool-call budget: the session cannot go on. */
  toolCallBudgetSpent: ({ context }: GuardArgs) => context.tally.toolCallBudgetSpent !== null,
  tokenBudgetLeft: ({ context, event }: GuardArgs) =>
    event.type !== 'model.responded' || tokensUsed(context.usage) + event.usage.inputTokens + event.usage.outputTokens <= context.budgets.maxTokens,
  /** Some of the token budget is left for another model call (what this agent and its joined children spent is below it). */
  tokensLeft: ({ context }: GuardArgs) => tokensUsed(context.usage) < context.budgets.maxTokens,
  turnBudgetLeft: ({ context }: GuardArgs) => context.usage.turns + context.tally.delegated.turns < context.budgets.maxTurns,
  wallTimeLeft: ({ context }: GuardArgs) => context.usage.elapsedMs - context.startedAtMs < context.budgets.maxWallTimeMs,
  /** A model call failed once the wall time was spent (resume does not rerun an in-doubt call then): the budget ended it. */
  wallTimeSpentAtFailure: ({ context, event }: GuardArgs) => event.type === 'model.failed' && event.elapsedMs - context.startedAtMs >= context.budgets.maxWallTimeMs,
};
