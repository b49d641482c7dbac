import type { RecordEnvelope } from '../../models/envelope.js';
import type { TokenUsage } from '../../models/model.records.js';
import { defaultPrices, priceOf, type ModelPrice, type Prices } from '../../models/price-table.js';

const offline: ReadonlySet<string> = new Set(['scripted', 'recorded']);

/** A known 0: what the offline providers' calls cost when the table does not price their model. */
const free: ModelPrice = Object.freeze({ input: 0, output: 0 });

/**
 * The price a call of `model` on `provider` is charged at: the table's for the model (exact name or prefix); else a
 * known 0 for the scripted and recorded providers (they run no paid model — give their model a price to rehearse a
 * cost budget); else undefined ("unknown", never 0).
 */
export const callPrice = (prices: Prices, provider: string | undefined, model: string | undefined): ModelPrice | undefined =>
  priceOf(prices, model) ?? (provider !== undefined && offline.has(provider) ? free : undefined);

/** What one usage costs in US dollars at `price` (cache reads and writes are part of `inputTokens`, priced apart). */
export const costOfUsage = (usage: TokenUsage, price: ModelPrice): number => {
  const read = usage.cacheReadTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const plain = Math.max(0, usage.inputTokens - read - written);
  return (plain * price.input + read * (price.cacheRead ?? price.input) + written * (price.cacheWrite ?? price.input) + usage.outputTokens * price.output) / 1_000_000;
};

/** The cost of a session, derived from its log (never stored): per model call, per agent, in all. */
export interface SessionCost {
  /** US dollars; undefined when a call's model has no price ("unknown", never 0). */
  usd: number | undefined;
  /** Per agent path (children attributed to themselves; the session's total includes them). */
  byActor: ReadonlyMap<string, { usd: number | undefined; calls: number }>;
  /** Per model call, in log order. */
  calls: ReadonlyArray<{ seq: number; actor: string; turn: number | undefined; usd: number | undefined }>;
  /** The models that had no price. */
  unpriced: readonly string[];
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * Fold a session's records into its cost at `prices` (default the shipped `defaultPrices`): each `model.responded`
 * is priced at its session's model (`session.created.provider.model`). O(records); a projection, recomputed on read.
 */
export const sessionCost = (records: Iterable<RecordEnvelope>, prices: Prices = defaultPrices): SessionCost => {
  let model: string | undefined;
  let provider: string | undefined;
  let usd: number | undefined = 0;
  const byActor = new Map<string, { usd: number | undefined; calls: number }>();
  const calls: Array<{ seq: number; actor: string; turn: number | undefined; usd: number | undefined }> = [];
  const unpriced = new Set<string>();
  const tokens = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const record of records) {
    if (record.type === 'session.created') {
      const named = (record.data as { provider?: { model?: string; name?: string } }).provider;
      model = named?.model;
      provider = named?.name;
    }
    if (record.type !== 'model.responded') continue;
    const data = record.data as { usage: TokenUsage; turn?: number };
    const price = callPrice(prices, provider, model);
    const cost = price ? costOfUsage(data.usage, price) : undefined;
    if (!price) unpriced.add(model ?? '(no model named)');
    usd = usd === undefined || cost === undefined ? undefined : usd + cost;
    const actor = byActor.get(record.actor) ?? { usd: 0, calls: 0 };
    byActor.set(record.actor, { usd: actor.usd === undefined || cost === undefined ? undefined : actor.usd + cost, calls: actor.calls + 1 });
    calls.push({ seq: record.seq, actor: record.actor, turn: typeof data.turn === 'number' ? data.turn : undefined, usd: cost });
    tokens.inputTokens += data.usage.inputTokens;
    tokens.outputTokens += data.usage.outputTokens;
    tokens.cacheReadTokens += data.usage.cacheReadTokens ?? 0;
    tokens.cacheWriteTokens += data.usage.cacheWriteTokens ?? 0;
  }
  return { usd, byActor, calls, unpriced: [...unpriced], ...tokens };
};

/** `$0.0123`, or `cost unknown (no price for m)`; with the cache hit rate when the provider reported cache reads. */
export const formatCost = (cost: SessionCost): string => {
  const money = cost.usd === undefined ? `cost unknown (no price for ${cost.unpriced.join(', ')})` : `$${cost.usd < 1 ? cost.usd.toFixed(4) : cost.usd.toFixed(2)}`;
  const hit = cost.inputTokens > 0 && cost.cacheReadTokens > 0 ? ` · cache ${Math.round((100 * cost.cacheReadTokens) / cost.inputTokens)}% of input` : '';
  return `${money}${hit}`;
};

/** The cost line `rein show` ends with: the total, then each agent's share when children ran. */
export const costLine = (cost: SessionCost): string => {
  const agents = cost.byActor.size > 1 ? ` — ${[...cost.byActor].map(([actor, entry]) => `${actor} ${entry.usd === undefined ? 'unknown' : `$${entry.usd.toFixed(4)}`} (${entry.calls} calls)`).join(', ')}` : '';
  return `cost: ${formatCost(cost)}${agents}`;
};
