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

/** One agent's share of a session's cost. */
export interface AgentCost {
  /** US dollars; undefined when one of its calls' model has no price. */
  usd: number | undefined;
  calls: number;
  inputTokens: number;
  cacheReadTokens: number;
}

/** The cost of a session, derived from its log (never stored): per model call, per agent, in all. */
export interface SessionCost {
  /** US dollars; undefined when a call's model has no price ("unknown", never 0). */
  usd: number | undefined;
  /** Per agent path (children attributed to themselves; the session's total includes them). */
  byActor: ReadonlyMap<string, AgentCost>;
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
 * A session's cost folded one record at a time (`add`), for a reader that folds forward as records arrive (the
 * viewer's session digest): O(1) work per record, its state grows with the number of agents only — unless it keeps
 * `calls` (`sessionCost` does; the digest does not).
 */
export class CostFold {
  readonly #prices: Prices;
  readonly #keepCalls: boolean;
  #model: string | undefined;
  #provider: string | undefined;
  #usd: number | undefined = 0;
  readonly #byActor = new Map<string, AgentCost>();
  readonly #calls: Array<{ seq: number; actor: string; turn: number | undefined; usd: number | undefined }> = [];
  readonly #unpriced = new Set<string>();
  #inputTokens = 0;
  #outputTokens = 0;
  #cacheReadTokens = 0;
  #cacheWriteTokens = 0;

  // Read through getters: a reply still waiting for its attempt is priced first (at the session's model).
  get usd(): number | undefined {
    this.#settle();
    return this.#usd;
  }
  get byActor(): ReadonlyMap<string, AgentCost> {
    this.#settle();
    return this.#byActor;
  }
  get calls(): ReadonlyArray<{ seq: number; actor: string; turn: number | undefined; usd: number | undefined }> {
    this.#settle();
    return this.#calls;
  }
  get inputTokens(): number {
    this.#settle();
    return this.#inputTokens;
  }
  get outputTokens(): number {
    this.#settle();
    return this.#outputTokens;
  }
  get cacheReadTokens(): number {
    this.#settle();
    return this.#cacheReadTokens;
  }
  get cacheWriteTokens(): number {
    this.#settle();
    return this.#cacheWriteTokens;
  }

  constructor(prices: Prices = defaultPrices, options: { keepCalls?: boolean } = {}) {
    this.#prices = prices;
    this.#keepCalls = options.keepCalls ?? true;
  }

  /** A `model.responded` waiting for the attempt that answered it (in the next record: its step record, or its own). */
  #pending: RecordEnvelope | undefined;
  /** The newest answering attempt seen before its `model.responded` (older logs wrote facts before the input). */
  #answeredBefore: { effectId: string; provider: string; model?: string } | undefined;

  /**
   * Fold one record: `session.created` names the model; each `model.responded` is priced at the model whose
   * `model.attempted` answered it (a fallback's, a resume's on another model, a child's), else at the session's.
   */
  add(record: RecordEnvelope): void {
    const answer = answersIn(record);
    if (this.#pending) {
      const pending = this.#pending;
      this.#pending = undefined;
      const by = answer.find((found) => found.effectId === (pending.data as { effectId?: unknown }).effectId);
      this.#price(pending, by);
    }
    if (record.type === 'model.attempted') this.#answeredBefore = answer[0];
    if (record.type === 'session.created') {
      const named = (record.data as { provider?: { model?: string; name?: string } }).provider;
      this.#model = named?.model;
      this.#provider = named?.name;
    }
    if (record.type !== 'model.responded') return;
    const before = this.#answeredBefore;
    if (before && before.effectId === (record.data as { effectId?: unknown }).effectId) {
      this.#answeredBefore = undefined;
      this.#price(record, before);
    } else this.#pending = record;
  }

  #price(record: RecordEnvelope, by: { provider: string; model?: string } | undefined): void {
    const data = record.data as { usage: TokenUsage; turn?: number };
    const provider = by ? by.provider : this.#provider;
    const model = by ? by.model : this.#model;
    const price = callPrice(this.#prices, provider, model);
    const cost = price ? costOfUsage(data.usage, price) : undefined;
    if (!price) this.#unpriced.add(model ?? '(no model named)');
    this.#usd = this.#usd === undefined || cost === undefined ? undefined : this.#usd + cost;
    const read = data.usage.cacheReadTokens ?? 0;
    const actor = this.#byActor.get(record.actor) ?? { usd: 0, calls: 0, inputTokens: 0, cacheReadTokens: 0 };
    this.#byActor.set(record.actor, {
      usd: actor.usd === undefined || cost === undefined ? undefined : actor.usd + cost,
      calls: actor.calls + 1,
      inputTokens: actor.inputTokens + data.usage.inputTokens,
      cacheReadTokens: actor.cacheReadTokens + read,
    });
    if (this.#keepCalls) this.#calls.push({ seq: record.seq, actor: record.actor, turn: typeof data.turn === 'number' ? data.turn : undefined, usd: cost });
    this.#inputTokens += data.usage.inputTokens;
    this.#outputTokens += data.usage.outputTokens;
    this.#cacheReadTokens += read;
    this.#cacheWriteTokens += data.usage.cacheWriteTokens ?? 0;
  }

  /** The models that had no price so far. */
  get unpriced(): readonly string[] {
    this.#settle();
    return [...this.#unpriced];
  }

  /** A reply whose attempt is not folded yet is priced at the session's model (a log cut between them, or none written). */
  #settle(): void {
    if (!this.#pending) return;
    const pending = this.#pending;
    this.#pending = undefined;
    this.#price(pending, undefined);
  }

  /** The cost as folded so far. */
  result(): SessionCost {
    this.#settle();
    const { usd, byActor, calls, unpriced, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = this;
    return { usd, byActor, calls, unpriced, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
  }
}

/** The answering attempts (`model.attempted`, outcome ok, decision done) a record holds: itself, or a step record's facts. */
const answersIn = (record: RecordEnvelope): Array<{ effectId: string; provider: string; model?: string }> => {
  const of = (data: unknown) => {
    const attempt = data as { effectId?: unknown; provider?: unknown; model?: unknown; outcome?: unknown; decision?: unknown } | undefined;
    if (attempt?.outcome !== 'ok' || attempt.decision !== 'done' || typeof attempt.effectId !== 'string' || typeof attempt.provider !== 'string') return [];
    return [{ effectId: attempt.effectId, provider: attempt.provider, ...(typeof attempt.model === 'string' ? { model: attempt.model } : {}) }];
  };
  if (record.type === 'model.attempted') return of(record.data);
  if (record.type !== 'step.derived') return [];
  return ((record.data as { facts?: ReadonlyArray<readonly [string, unknown, ...unknown[]]> }).facts ?? []).flatMap((fact) => (fact[0] === 'model.attempted' ? of(fact[1]) : []));
};

/** Cache reads as a share of input tokens (0..1); undefined when there was no input. */
export const cacheHitRate = (usage: { inputTokens: number; cacheReadTokens: number }): number | undefined => (usage.inputTokens > 0 ? usage.cacheReadTokens / usage.inputTokens : undefined);

/**
 * Fold a session's records into its cost at `prices` (default the shipped `defaultPrices`): each `model.responded`
 * is priced at its session's model (`session.created.provider.model`). O(records); a projection, recomputed on read.
 */
export const sessionCost = (records: Iterable<RecordEnvelope>, prices: Prices = defaultPrices): SessionCost => {
  const fold = new CostFold(prices);
  for (const record of records) fold.add(record);
  return fold.result();
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
