import type { TokenUsage } from '../../models/model.records.js';
import type { Prices } from '../../models/price-table.js';
import { callPrice, costOfUsage } from './cost.js';

/**
 * A session's token usage in all (every agent of the tree: children included), as the session host keeps it next to
 * the log (`AppendOptions.summary`) so a listing can price a session without reading its records. Facts only (tokens
 * and the model they were spent on); money is derived from it at read time at the reader's prices (`usageCost`).
 */
export interface UsageSummary {
  /** The provider and model the session was created with (`session.created.provider`): every call is priced at it. */
  provider?: string;
  model?: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** No call yet. */
export const emptyUsage: UsageSummary = Object.freeze({ calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

/**
 * Fold records into a usage summary: `session.created` names the model, each `model.responded` (any actor) adds its
 * usage. Returns `previous` itself when nothing in `records` changes it. O(records).
 */
export const usageOf = (records: Iterable<{ readonly type: string; readonly data?: unknown }>, previous: UsageSummary = emptyUsage): UsageSummary => {
  let usage = previous;
  for (const record of records) {
    if (record.type === 'session.created') {
      const named = (record.data as { provider?: { model?: unknown; name?: unknown } } | undefined)?.provider;
      usage = { ...usage };
      if (typeof named?.name === 'string') usage.provider = named.name;
      if (typeof named?.model === 'string') usage.model = named.model;
    } else if (record.type === 'model.responded') {
      const spent = (record.data as { usage?: Partial<TokenUsage> } | undefined)?.usage;
      usage = {
        ...usage,
        calls: usage.calls + 1,
        inputTokens: usage.inputTokens + count(spent?.inputTokens),
        outputTokens: usage.outputTokens + count(spent?.outputTokens),
        cacheReadTokens: usage.cacheReadTokens + count(spent?.cacheReadTokens),
        cacheWriteTokens: usage.cacheWriteTokens + count(spent?.cacheWriteTokens),
      };
    }
  }
  return usage;
};

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Whether a stored summary value is a `UsageSummary` (a summary of another shape is ignored: the log rebuilds it). */
export const isUsageSummary = (value: unknown): value is UsageSummary => {
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return (
    isCount(usage['calls']) &&
    isCount(usage['inputTokens']) &&
    isCount(usage['outputTokens']) &&
    isCount(usage['cacheReadTokens']) &&
    isCount(usage['cacheWriteTokens']) &&
    (usage['provider'] === undefined || typeof usage['provider'] === 'string') &&
    (usage['model'] === undefined || typeof usage['model'] === 'string')
  );
};

/**
 * What a usage summary costs at `prices`: `{ usd }`, or `{ unpriced }` naming the model that has no price ("unknown",
 * never 0). Priced as `sessionCost` prices each call (the same rule, summed: the price is linear in tokens).
 */
export const usageCost = (usage: UsageSummary, prices: Prices): { usd: number } | { unpriced: string } => {
  if (usage.calls === 0) return { usd: 0 };
  const price = callPrice(prices, usage.provider, usage.model);
  if (!price) return { unpriced: usage.model ?? '(no model named)' };
  return { usd: costOfUsage({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cacheReadTokens: usage.cacheReadTokens, cacheWriteTokens: usage.cacheWriteTokens }, price) };
};

/** `$0.0123` (four decimals under a dollar, two above), or `unknown`. */
export const formatUsd = (usd: number | undefined): string => (usd === undefined ? 'unknown' : `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`);
