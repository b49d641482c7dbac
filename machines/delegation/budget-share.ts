import type { Budgets } from '../../models/budgets.js';
import type { ChildUsage } from '../../models/delegation.records.js';

/** Turns, tool calls and tokens a delegation's children may spend between them: what the parent holds for them. */
export interface BudgetPool {
  turns: number;
  toolCalls: number;
  tokens: number;
}

export const emptyPool: BudgetPool = Object.freeze({ turns: 0, toolCalls: 0, tokens: 0 });

export const addPools = (a: BudgetPool, b: BudgetPool): BudgetPool => ({ turns: a.turns + b.turns, toolCalls: a.toolCalls + b.toolCalls, tokens: a.tokens + b.tokens });

/**
 * Split `available` between tasks that want `wants` each, max-min fair: no task gets more than it wants, a task that
 * wants less than an equal share keeps the difference for the others, and what flooring leaves over goes one unit
 * at a time to the first tasks (in task order) still short of what they want. The shares never add up to more than
 * `available` (nor to less than `min(available, Σ wants)`). Pure and deterministic: the order of `wants` is the tasks'.
 */
export const fairShares = (wants: readonly number[], available: number): number[] => {
  const shares = wants.map(() => 0);
  let left = Math.max(0, Math.floor(available));
  // Smallest wants first (ties in task order): a task that wants no more than an equal share of what is left gets it.
  const order = wants.map((want, index) => ({ want: Math.max(0, want), index })).sort((a, b) => a.want - b.want || a.index - b.index);
  for (let position = 0; position < order.length; position++) {
    const fair = Math.floor(left / (order.length - position));
    if (order[position]!.want <= fair) {
      shares[order[position]!.index] = order[position]!.want;
      left -= order[position]!.want;
      continue;
    }
    // Every task from here wants more than an equal share: each gets it, and the units flooring left over go one
    // each to the first of them in task order.
    const rest = order.slice(position).map((entry) => entry.index).sort((a, b) => a - b);
    left -= fair * rest.length;
    for (const index of rest) shares[index] = fair + (left-- > 0 ? 1 : 0);
    break;
  }
  return shares;
};

/**
 * The budgets of a delegation's children, drawn from one pool: the parent's remaining budgets at the moment it
 * delegates (`ceiling`). Turns, tool calls and tokens are split between the tasks (`fairShares`, each task wanting
 * its own budget); the parent keeps one of its remaining turns to read the join, so the children share the rest. The
 * wall time is not split (the children run at the same time): each child's is clamped to what the parent has left.
 * So however many children run in parallel, together they can never spend more than the parent had left.
 */
export const shareBudgets = (wanted: readonly Budgets[], ceiling: Budgets): Budgets[] => {
  const turns = fairShares(wanted.map((budgets) => budgets.maxTurns), ceiling.maxTurns - 1);
  const toolCalls = fairShares(wanted.map((budgets) => budgets.maxToolCalls), ceiling.maxToolCalls);
  const tokens = fairShares(wanted.map((budgets) => budgets.maxTokens), ceiling.maxTokens);
  return wanted.map((budgets, index) => ({
    maxTurns: turns[index]!,
    maxToolCalls: toolCalls[index]!,
    maxTokens: tokens[index]!,
    maxWallTimeMs: Math.max(1, Math.min(budgets.maxWallTimeMs, ceiling.maxWallTimeMs)),
  }));
};

/** What a set of children's budgets takes from the parent's pool. */
export const poolOf = (budgets: readonly Budgets[]): BudgetPool =>
  budgets.reduce((pool, child) => ({ turns: pool.turns + child.maxTurns, toolCalls: pool.toolCalls + child.maxToolCalls, tokens: pool.tokens + child.maxTokens }), emptyPool);

interface AgentSpending {
  usage: { turns: number; toolCalls: number; inputTokens: number; outputTokens: number };
  tally: { delegated: { turns: number; toolCalls: number } };
}

/** What an agent spent, its delegated children's charges included (its tokens already hold theirs): what its parent is charged. */
export const spentOf = (context: AgentSpending): ChildUsage => ({
  turns: context.usage.turns + (context.tally?.delegated?.turns ?? 0),
  toolCalls: context.usage.toolCalls + (context.tally?.delegated?.toolCalls ?? 0),
  inputTokens: context.usage.inputTokens,
  outputTokens: context.usage.outputTokens,
});

const addUsage = (a: ChildUsage, b: ChildUsage): ChildUsage => ({ turns: a.turns + b.turns, toolCalls: a.toolCalls + b.toolCalls, inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens });

interface ActorLike {
  getSnapshot(): { status?: string; context?: unknown; children?: Record<string, ActorLike> };
}

/**
 * What a running agent has spent so far, read from its actor (and, for the delegations it still waits on, from their
 * children: an ended child's usage as recorded, a running one's read the same way): what its parent is charged when
 * it stops the agent before it ends (the join was decided, its deadline passed). `undefined` when the actor is not an
 * agent (a stand-in, in model checking). A read of the actor tree's state, deterministic on replay like the rest.
 */
export const spentSoFar = (actor: ActorLike | undefined): ChildUsage | undefined => {
  const snapshot = actor?.getSnapshot();
  const context = snapshot?.context as Partial<AgentSpending> | undefined;
  if (!context?.usage || !context.tally?.delegated) return undefined;
  let spent = spentOf(context as AgentSpending);
  for (const child of Object.values(snapshot?.children ?? {})) {
    const state = child.getSnapshot();
    const delegation = state.context as { children?: Array<{ status: string; usage?: ChildUsage }> } | undefined;
    if (state.status !== 'active' || !Array.isArray(delegation?.children) || !('slots' in (delegation as object))) continue;
    delegation.children.forEach((grandchild, index) => {
      const running = grandchild.status === 'running' || grandchild.status === 'awaiting-approval';
      const usage = running ? spentSoFar(state.children?.[String(index)]) : grandchild.usage;
      if (usage) spent = addUsage(spent, usage);
    });
  }
  return spent;
};
