import type { RecordEnvelope } from '../../models/envelope.js';
import type { TokenUsage } from '../../models/model.records.js';
import type { CostBudgetStop } from '../../models/session.records.js';
import type { Prices } from '../../models/price-table.js';
import { callPrice, costOfUsage } from '../projections/cost.js';
import { ReinError } from '../host/host-errors.js';

/**
 * The output cap of a model call under a cost budget when no `maxOutputTokens` is configured: without a cap a call's
 * worst case has no bound (OpenAI-compatible requests send none by default), so rein sends this one.
 */
export const costBudgetOutputTokens = 8_192;

/** One model call asking to start: who, which model, and its worst case in tokens. */
export interface CostBudgetCall {
  effectId: string;
  actor: string;
  provider: string;
  model?: string | undefined;
  /** The input's tokens as counted for the context policy. */
  inputTokens: number;
  maxOutputTokens: number;
}

/** What the model-call executor asks of a cost budget. */
export interface ModelCallBudget {
  /** Whether a cost budget applies now (then calls are capped at `costBudgetOutputTokens` unless configured). */
  readonly limited: boolean;
  /** Admit the call (and reserve its worst case until it is answered), or say why it may not start. */
  admit(call: CostBudgetCall): CostBudgetStop | undefined;
}

/**
 * A session tree's cost budget, folded from its log (O(1) per record): the limit in force (`session.created.budgets`,
 * replaced by a `session.resumed` that gives one), what its recorded model calls cost (every agent's `model.responded`,
 * priced as `sessionCost` prices them), and the worst cases of calls admitted and not answered yet. The decision rests
 * on recorded facts and the price table; a stop is recorded with every figure it used.
 */
export class CostBudget implements ModelCallBudget {
  private limit: number | undefined;
  private spent: number | undefined = 0;
  private provider: string | undefined;
  private model: string | undefined;
  private readonly reserved = new Map<string, number>();

  constructor(private readonly prices: Prices) {}

  get limited(): boolean {
    return this.limit !== undefined;
  }

  /** The limit in force (US dollars), if any. */
  get limitUsd(): number | undefined {
    return this.limit;
  }

  /** What the tree's recorded calls cost so far (undefined: one of them has no price). */
  get spentUsd(): number | undefined {
    return this.spent;
  }

  /** Fold one record (every record of the session, in seq order). */
  observe(record: RecordEnvelope): void {
    const data = record.data as Record<string, unknown>;
    if (record.type === 'session.created') {
      const provider = data.provider as { name?: string; model?: string } | undefined;
      this.provider = provider?.name;
      this.model = provider?.model;
      this.limit = (data.budgets as { maxCostUsd?: number } | undefined)?.maxCostUsd;
    } else if (record.type === 'session.resumed' && typeof data.maxCostUsd === 'number') {
      this.limit = data.maxCostUsd;
    } else if (record.type === 'model.responded') {
      const price = callPrice(this.prices, this.provider, this.model);
      const cost = price ? costOfUsage(data.usage as TokenUsage, price) : undefined;
      this.spent = this.spent === undefined || cost === undefined ? undefined : this.spent + cost;
      this.reserved.delete(String(data.effectId));
    } else if (record.type === 'model.failed' || record.type === 'effect.failed') {
      this.reserved.delete(String(data.effectId));
    }
  }

  admit(call: CostBudgetCall): CostBudgetStop | undefined {
    const limit = this.limit;
    if (limit === undefined) return undefined;
    const price = callPrice(this.prices, call.provider, call.model);
    // The worst case of the input: every token written to the cache where that costs more than plain input.
    const worst = price ? (call.inputTokens * Math.max(price.input, price.cacheWrite ?? price.input) + call.maxOutputTokens * price.output) / 1_000_000 : undefined;
    let others = 0;
    for (const [effectId, usd] of this.reserved) if (effectId !== call.effectId) others += usd;
    if (this.spent !== undefined && worst !== undefined && this.spent + others + worst <= limit) {
      this.reserved.set(call.effectId, worst);
      return undefined;
    }
    this.reserved.delete(call.effectId);
    return {
      code: 'COST_BUDGET_REACHED',
      effectId: call.effectId,
      actor: call.actor,
      ...(call.model === undefined ? {} : { model: call.model }),
      limitUsd: limit,
      ...(this.spent === undefined ? {} : { spentUsd: this.spent }),
      reservedUsd: others,
      ...(worst === undefined ? {} : { worstCaseUsd: worst }),
      inputTokens: call.inputTokens,
      maxOutputTokens: call.maxOutputTokens,
    };
  }
}

/**
 * A cost budget needs a price for every model that may answer (the provider's and each fallback's): refused up front
 * with `PRICE_UNKNOWN` otherwise, before anything is recorded — the budget could not be checked.
 */
export const refuseUnpricedModels = (prices: Prices, providers: ReadonlyArray<{ name: string; model?: string | undefined }>, limitUsd: number | undefined): void => {
  if (limitUsd === undefined) return;
  const unpriced = providers.filter((provider) => callPrice(prices, provider.name, provider.model) === undefined);
  if (unpriced.length === 0) return;
  const names = unpriced.map((provider) => (provider.model ? `${provider.name}/${provider.model}` : `${provider.name} (no model named)`)).join(', ');
  throw new ReinError('PRICE_UNKNOWN', `a cost budget of $${limitUsd} cannot be checked: no price for ${names}; give each model a price in "prices" (rein.config.json, or createRein({ prices })) in US dollars per million tokens`);
};
