import type { TokenUsage } from '../../models/model.records.js';
import type { Prices } from '../../models/price-table.js';
import { callPrice, costOfUsage } from './cost.js';

/**
 * A session's token usage in all (every agent of the tree: children included), as the session host keeps it next to
 * the log (`AppendOptions.summary`) so a listing can price a session without reading its records. Facts only (tokens
 * and the model they were spent on); money is derived from it at read time at the reader's prices (`usageCost`).
 */
export interface UsageSummary extends ModelUsage {
  /**
   * The same usage per model that answered (each call's `model.attempted` that ended it: a fallback's model, a resume
   * on another model, a child's), so each agent's calls are priced at their own model. Absent in summaries written
   * before it was kept: those are priced at the session's model. (`provider` and `model` here are the ones the session
   * was created with, `session.created.provider`: a call no attempt names is priced at them.)
   */
  models?: ModelUsage[];
}

/** The usage of the calls one provider and model answered. */
export interface ModelUsage {
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

type Answerer = { provider?: string; model?: string };
type Tokens = Pick<ModelUsage, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens'>;

/** The provider and model of a `model.attempted` that ended its call with an answer, else undefined. */
const answererOf = (data: unknown): { effectId: string; answerer: Answerer } | undefined => {
  const attempt = data as { effectId?: unknown; provider?: unknown; model?: unknown; outcome?: unknown; decision?: unknown } | undefined;
  if (attempt?.outcome !== 'ok' || attempt.decision !== 'done' || typeof attempt.effectId !== 'string' || typeof attempt.provider !== 'string') return undefined;
  return { effectId: attempt.effectId, answerer: { provider: attempt.provider, ...(typeof attempt.model === 'string' ? { model: attempt.model } : {}) } };
};

/** `models` with one call's tokens added to its answerer's entry (a new array; entries kept in first-seen order). */
const addToModel = (models: readonly ModelUsage[], answerer: Answerer, tokens: Tokens): ModelUsage[] => {
  let index = 0;
  while (index < models.length && (models[index]!.provider !== answerer.provider || models[index]!.model !== answerer.model)) index++;
  if (index === models.length) index = -1;
  const entry = index >= 0 ? models[index]! : { ...answerer, calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const next = { ...entry, calls: entry.calls + 1, inputTokens: entry.inputTokens + tokens.inputTokens, outputTokens: entry.outputTokens + tokens.outputTokens, cacheReadTokens: entry.cacheReadTokens + tokens.cacheReadTokens, cacheWriteTokens: entry.cacheWriteTokens + tokens.cacheWriteTokens };
  const updated = models.slice();
  if (index >= 0) updated[index] = next;
  else updated.push(next);
  return updated;
};

/** The per-model list of a summary; one written before it was kept counts every call at the session's model. */
const modelsOf = (usage: UsageSummary): ModelUsage[] => {
  if (usage.models) return usage.models;
  if (usage.calls === 0) return [];
  const { provider, model, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = usage;
  return [{ ...(provider === undefined ? {} : { provider }), ...(model === undefined ? {} : { model }), calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens }];
};

/**
 * Fold records into a usage summary: `session.created` names the model, each `model.responded` (any actor) adds its
 * usage, to the totals and to the model whose `model.attempted` answered it (a fact folded in the step record) — the
 * session's model when none did. Returns `previous` itself when nothing in `records` changes it. O(records).
 */
export const usageOf = (records: Iterable<{ readonly type: string; readonly data?: unknown }>, previous: UsageSummary = emptyUsage): UsageSummary => {
  let usage = previous;
  // A call's answer and the attempt that gave it are in the same batch (the attempt folded into the step record, or a
  // record of its own in older logs, before or after): paired by effect id within the records folded.
  // Both made on first use: most batches hold no model call (a tool's settlement, a fact).
  let responses: Array<{ effectId: unknown; tokens: Tokens }> | undefined;
  let answered: Map<string, Answerer> | undefined;
  for (const record of records) {
    if (record.type === 'model.attempted') {
      const found = answererOf(record.data);
      if (found) (answered ??= new Map()).set(found.effectId, found.answerer);
      continue;
    }
    if (record.type === 'step.derived') {
      const facts = (record.data as { facts?: ReadonlyArray<readonly [string, unknown, ...unknown[]]> } | undefined)?.facts;
      if (facts === undefined) continue;
      for (const fact of facts) {
        const found = fact[0] === 'model.attempted' ? answererOf(fact[1]) : undefined;
        if (found) (answered ??= new Map()).set(found.effectId, found.answerer);
      }
      continue;
    }
    if (record.type === 'session.created') {
      const named = (record.data as { provider?: { model?: unknown; name?: unknown } } | undefined)?.provider;
      usage = { ...usage };
      if (typeof named?.name === 'string') usage.provider = named.name;
      if (typeof named?.model === 'string') usage.model = named.model;
    } else if (record.type === 'model.responded') {
      const spent = (record.data as { usage?: Partial<TokenUsage> } | undefined)?.usage;
      // Each count read once (for the call's model and for the totals).
      const tokens: Tokens = { inputTokens: count(spent?.inputTokens), outputTokens: count(spent?.outputTokens), cacheReadTokens: count(spent?.cacheReadTokens), cacheWriteTokens: count(spent?.cacheWriteTokens) };
      (responses ??= []).push({ effectId: (record.data as { effectId?: unknown } | undefined)?.effectId, tokens });
      usage = {
        ...usage,
        calls: usage.calls + 1,
        inputTokens: usage.inputTokens + tokens.inputTokens,
        outputTokens: usage.outputTokens + tokens.outputTokens,
        cacheReadTokens: usage.cacheReadTokens + tokens.cacheReadTokens,
        cacheWriteTokens: usage.cacheWriteTokens + tokens.cacheWriteTokens,
      };
    }
  }
  if (responses === undefined) return usage;
  let models = modelsOf(previous);
  // The session's model answers a call no attempt names (built key by key, and only then).
  let session: Answerer | undefined;
  const sessionAnswerer = (): Answerer => {
    if (session === undefined) {
      session = {};
      if (usage.provider !== undefined) session.provider = usage.provider;
      if (usage.model !== undefined) session.model = usage.model;
    }
    return session;
  };
  for (const { effectId, tokens } of responses) models = addToModel(models, (typeof effectId === 'string' ? answered?.get(effectId) : undefined) ?? sessionAnswerer(), tokens);
  return { ...usage, models };
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
    (usage['model'] === undefined || typeof usage['model'] === 'string') &&
    (usage['models'] === undefined || (Array.isArray(usage['models']) && usage['models'].every(isModelUsage)))
  );
};

const isModelUsage = (value: unknown): value is ModelUsage => {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    isCount(entry['calls']) && isCount(entry['inputTokens']) && isCount(entry['outputTokens']) && isCount(entry['cacheReadTokens']) && isCount(entry['cacheWriteTokens']) &&
    (entry['provider'] === undefined || typeof entry['provider'] === 'string') &&
    (entry['model'] === undefined || typeof entry['model'] === 'string')
  );
};

/**
 * What a usage summary costs at `prices`: `{ usd }`, or `{ unpriced }` naming the model that has no price ("unknown",
 * never 0). Priced as `sessionCost` prices each call (the same rule, summed: the price is linear in tokens).
 */
export const usageCost = (usage: UsageSummary, prices: Prices): { usd: number } | { unpriced: string } => {
  let usd = 0;
  // Each model's calls at its own price (a summary without `models`: all at the session's model).
  for (const entry of modelsOf(usage)) {
    if (entry.calls === 0) continue;
    const price = callPrice(prices, entry.provider, entry.model);
    if (!price) return { unpriced: entry.model ?? '(no model named)' };
    usd += costOfUsage({ inputTokens: entry.inputTokens, outputTokens: entry.outputTokens, cacheReadTokens: entry.cacheReadTokens, cacheWriteTokens: entry.cacheWriteTokens }, price);
  }
  return { usd };
};

/** `$0.0123` (four decimals under a dollar, two above), or `unknown`. */
export const formatUsd = (usd: number | undefined): string => (usd === undefined ? 'unknown' : `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`);
