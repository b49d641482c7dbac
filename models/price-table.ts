/*
 * The shipped price table and the lookup, without zod: the CLI's reading commands (`rein sessions`, `rein show`) price
 * sessions and must not load the schema library. The schemas that check a configured table are in prices.ts.
 */

/** One model's list price in US dollars per million tokens. Cache prices default to the input price when absent. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number | undefined;
  cacheWrite?: number | undefined;
}

/** Prices by model name; a name also prices the models it is a prefix of (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`). */
export type Prices = Record<string, ModelPrice>;

/** The date the shipped prices were taken from the vendors' public price lists; override them with `prices`. */
export const defaultPricesAsOf = '2025-11-01';

/** Shipped list prices (USD per million tokens, as of `defaultPricesAsOf`) of common models. */
export const defaultPrices: Prices = Object.freeze({
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
});

/** The price of `model`: an exact name, else the longest name it starts with (`-` separated); undefined: unknown. */
export const priceOf = (prices: Prices, model: string | undefined): ModelPrice | undefined => {
  if (model === undefined) return undefined;
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  for (const name of Object.keys(prices)) if (model.startsWith(`${name}-`) && (best === undefined || name.length > best.length)) best = name;
  return best === undefined ? undefined : prices[best];
};
