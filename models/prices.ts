import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** One model's list price in US dollars per million tokens. Cache prices default to the input price when absent. */
export const ModelPrice = lazySchema(() => z.strictObject({
  input: z.number().nonnegative().finite(),
  output: z.number().nonnegative().finite(),
  cacheRead: z.number().nonnegative().finite().optional(),
  cacheWrite: z.number().nonnegative().finite().optional(),
}));
export type ModelPrice = z.infer<typeof ModelPrice>;

/** Prices by model name; a name also prices the models it is a prefix of (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`). */
export const Prices = lazySchema(() => z.record(z.string().min(1), ModelPrice));
export type Prices = z.infer<typeof Prices>;

export { defaultPrices, defaultPricesAsOf, priceOf } from './price-table.js';
