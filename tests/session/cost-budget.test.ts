import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { CostBudget, refuseUnpricedModels } from '../../src/session/cost-budget.js';

const prices = { m: { input: 1, output: 2, cacheWrite: 1.25 } };
let seq = 0;
const record = (type: string, data: Record<string, unknown>, actor = 'root'): RecordEnvelope => ({ stream: 's', seq: ++seq, id: `r${seq}`, type, v: 1, at: 0, actor, data });
const created = (maxCostUsd?: number) => record('session.created', { provider: { name: 'openai', model: 'm' }, budgets: { maxTurns: 1, maxToolCalls: 1, maxTokens: 1, maxWallTimeMs: 1, ...(maxCostUsd === undefined ? {} : { maxCostUsd }) } });
const responded = (effectId: string, inputTokens: number, outputTokens: number, actor = 'root') => record('model.responded', { effectId, usage: { inputTokens, outputTokens } }, actor);
const call = (effectId: string, inputTokens: number, maxOutputTokens: number, actor = 'root') => ({ effectId, actor, provider: 'openai', model: 'm', inputTokens, maxOutputTokens });

describe('CostBudget: the tree spend, the calls under way and this call\'s worst case, folded from the log', () => {
  it('no budget admits everything; a budget charges every agent\'s calls and admits a call only while the sum fits', () => {
    const open = new CostBudget(prices);
    open.observe(created());
    expect(open.limited).toBe(false);
    expect(open.admit(call('e1', 10_000_000, 1))).toBeUndefined();

    const budget = new CostBudget(prices);
    budget.observe(created(3));
    budget.observe(responded('root:e1', 1_000_000, 0));
    budget.observe(responded('child:e1', 0, 500_000, 'root/child'));
    expect(budget.spentUsd).toBeCloseTo(2, 12);
    // Worst case of 400,000 input tokens at the cache-write price (1.25) and 200,000 output tokens at 2: $0.90.
    expect(budget.admit(call('root:e2', 400_000, 200_000))).toBeUndefined();
    // A parallel call's $0.90 worst case is reserved until it is answered: a second one does not fit beside it.
    const stop = budget.admit(call('child:e2', 400_000, 200_000, 'root/child'));
    expect(stop).toMatchObject({ code: 'COST_BUDGET_REACHED', effectId: 'child:e2', actor: 'root/child', limitUsd: 3, inputTokens: 400_000, maxOutputTokens: 200_000 });
    expect(stop?.reservedUsd).toBeCloseTo(0.9, 12);
    expect(stop?.worstCaseUsd).toBeCloseTo(0.9, 12);
    // Once the first is answered (cheaper than its worst case), its reservation is replaced by what it cost.
    budget.observe(responded('root:e2', 100_000, 0));
    expect(budget.admit(call('child:e2', 400_000, 200_000, 'root/child'))).toBeUndefined();
  });

  it('a resume that gives a budget replaces the recorded one; a retry of the same call replaces its own reservation', () => {
    const budget = new CostBudget(prices);
    budget.observe(created(1));
    expect(budget.admit(call('e1', 0, 400_000))).toBeUndefined();
    expect(budget.admit(call('e1', 0, 400_000))).toBeUndefined();
    expect(budget.admit(call('e2', 0, 400_000))).toBeDefined();
    budget.observe(record('model.failed', { effectId: 'e1' }));
    budget.observe(record('session.resumed', { fromSeq: 3, inDoubt: [], maxCostUsd: 1.5 }));
    expect(budget.limitUsd).toBe(1.5);
    expect(budget.admit(call('e2', 0, 700_000))).toBeUndefined();
  });

  it('an unpriced model cannot be checked: the call is stopped, and a budget for one is refused up front', () => {
    const budget = new CostBudget(prices);
    budget.observe(created(10));
    expect(budget.admit({ ...call('e1', 1, 1), model: 'unknown-model' })).toMatchObject({ code: 'COST_BUDGET_REACHED', model: 'unknown-model' });
    expect(() => refuseUnpricedModels(prices, [{ name: 'openai', model: 'm' }, { name: 'anthropic', model: 'x' }], 5)).toThrow(expect.objectContaining({ code: 'PRICE_UNKNOWN', message: expect.stringContaining('anthropic/x') }));
    expect(() => refuseUnpricedModels(prices, [{ name: 'anthropic', model: 'x' }], undefined)).not.toThrow();
    expect(() => refuseUnpricedModels(prices, [{ name: 'scripted', model: 'script' }], 5)).not.toThrow();
  });
});
