import { resolve } from 'node:path';
import { defaultPrices, type ModelPrice, type Prices } from '../../models/price-table.js';
import { ReinError } from '../host/host-errors.js';
import { configFileName } from '../providers/config-file-name.js';
import { readHostTextIfPresent } from '../util/read-regular-file.js';

const priceKeys: ReadonlySet<string> = new Set(['input', 'output', 'cacheRead', 'cacheWrite']);

/** One configured price checked by hand, as `ModelPrice` (models/prices.ts) checks it: finite dollars ≥ 0, known keys. */
const priceOf = (path: string, model: string, value: unknown): ModelPrice => {
  const bad = (problem: string): never => {
    throw new ReinError('CONFIG_INVALID', `${path}: prices.${model}: ${problem}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('must be an object such as { "input": 3, "output": 15 }');
  const entries = value as Record<string, unknown>;
  for (const [key, amount] of Object.entries(entries)) {
    if (!priceKeys.has(key)) bad(`unknown field ${JSON.stringify(key)}`);
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) bad(`${key}: must be a finite number of US dollars per million tokens ≥ 0`);
  }
  if (entries.input === undefined || entries.output === undefined) bad('input and output are required');
  return entries as unknown as ModelPrice;
};

/**
 * The prices the reading commands (`rein show`, `rein sessions`, `rein trace`) charge: the shipped defaults with
 * `rein.config.json`'s `prices` over them, read without the schema library (those commands must not load zod). A file
 * that is missing or has no `prices` gives the defaults; one whose `prices` is malformed is `CONFIG_INVALID`, as
 * `rein run` would say.
 */
export const configuredPrices = async (workspace: string): Promise<Prices> => {
  const path = resolve(workspace, configFileName);
  const text = await readHostTextIfPresent(path, path, (message) => new ReinError('CONFIG_INVALID', message));
  if (text === undefined) return defaultPrices;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The reading commands still read the log; `rein run` names the syntax error.
    return defaultPrices;
  }
  const prices = (value as { prices?: unknown } | null)?.prices;
  if (prices === undefined) return defaultPrices;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) throw new ReinError('CONFIG_INVALID', `${path}: prices: must be an object of model names`);
  const configured: Prices = {};
  for (const [model, price] of Object.entries(prices)) {
    if (model.length === 0) throw new ReinError('CONFIG_INVALID', `${path}: prices: a model name must not be empty`);
    configured[model] = priceOf(path, model, price);
  }
  return { ...defaultPrices, ...configured };
};
