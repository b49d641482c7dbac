import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { ModelPrice, Prices, defaultPrices, priceOf } from '../../models/prices.js';
import { costLine, costOfUsage, formatCost, sessionCost } from '../../src/projections/cost.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { spansOfRecords } from '../../src/projections/spans.view.js';
import { runScriptedSession } from '../../src/testing/run-scripted.js';

const record = (seq: number, type: string, actor: string, data: unknown): RecordEnvelope => ({ seq, type, actor, data, stream: 's', at: seq, id: `r${seq}` }) as unknown as RecordEnvelope;
const created = (model: string | undefined) => record(1, 'session.created', 'root', { task: 't', provider: { name: 'anthropic', ...(model ? { model } : {}) } });
const responded = (seq: number, actor: string, usage: object) => record(seq, 'model.responded', actor, { turn: seq, usage });

describe('cost in money', () => {
  it('prices a model by its exact name or the longest name it starts with; an unknown model has no price', () => {
    expect(priceOf(defaultPrices, 'claude-sonnet-4-5-20250929')).toEqual(defaultPrices['claude-sonnet-4-5']);
    expect(priceOf(defaultPrices, 'gpt-4o-mini-2024-07-18')).toEqual(defaultPrices['gpt-4o-mini']);
    expect(priceOf(defaultPrices, 'gpt-4o')).toEqual(defaultPrices['gpt-4o']);
    expect(priceOf(defaultPrices, 'llama-local')).toBeUndefined();
    expect(priceOf(defaultPrices, undefined)).toBeUndefined();
  });

  it('charges cache reads and writes at their own prices (they are part of the input count)', () => {
    const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    expect(costOfUsage({ inputTokens: 1_000_000, outputTokens: 0 }, price)).toBeCloseTo(3);
    expect(costOfUsage({ inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 900_000 }, price)).toBeCloseTo(0.1 * 3 + 0.9 * 0.3);
    expect(costOfUsage({ inputTokens: 1_000_000, outputTokens: 1_000_000, cacheWriteTokens: 1_000_000 }, price)).toBeCloseTo(3.75 + 15);
    // A price without cache prices charges them as input.
    expect(costOfUsage({ inputTokens: 10, outputTokens: 0, cacheReadTokens: 10 }, { input: 1, output: 1 })).toBeCloseTo(10 / 1_000_000);
  });

  it('per call, per agent (children attributed) and in all, derived from the log; unknown stays unknown, never 0', () => {
    const records = [created('claude-sonnet-4-5'), responded(2, 'root', { inputTokens: 1000, outputTokens: 100 }), responded(3, 'root/t1', { inputTokens: 2000, outputTokens: 50, cacheReadTokens: 1500 }), responded(4, 'root', { inputTokens: 3000, outputTokens: 10, cacheReadTokens: 2500, cacheWriteTokens: 400 })];
    const cost = sessionCost(records);
    const expected = (1000 * 3 + 100 * 15 + 500 * 3 + 1500 * 0.3 + 50 * 15 + 100 * 3 + 2500 * 0.3 + 400 * 3.75 + 10 * 15) / 1e6;
    expect(cost.usd).toBeCloseTo(expected, 10);
    expect(cost.byActor.get('root/t1')!.usd).toBeCloseTo((500 * 3 + 1500 * 0.3 + 50 * 15) / 1e6, 10);
    expect(cost.byActor.get('root')!.calls).toBe(2);
    expect(cost.calls.map((call) => call.actor)).toEqual(['root', 'root/t1', 'root']);
    expect(formatCost(cost)).toMatch(/^\$0\.\d{4} · cache 67% of input$/);
    expect(costLine(cost)).toContain('root/t1 $');

    const unknown = sessionCost([created('my-local-model'), responded(2, 'root', { inputTokens: 10, outputTokens: 1 })]);
    expect(unknown.usd).toBeUndefined();
    expect(formatCost(unknown)).toBe('cost unknown (no price for my-local-model)');
    // The configuration's prices price it.
    expect(sessionCost([created('my-local-model'), responded(2, 'root', { inputTokens: 1_000_000, outputTokens: 0 })], { ...defaultPrices, 'my-local-model': { input: 0.5, output: 1 } }).usd).toBeCloseTo(0.5);
  });

  it('a prices object is checked: negative, non-finite or unknown fields are refused', () => {
    expect(Prices.safeParse({ m: { input: -1, output: 1 } }).success).toBe(false);
    expect(Prices.safeParse({ m: { input: 1, output: 1, cached: 1 } }).success).toBe(false);
    expect(Prices.safeParse({ m: { input: 1, output: Number.POSITIVE_INFINITY } }).success).toBe(false);
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const parsed = ModelPrice.safeParse(value);
        if (parsed.success) expect(costOfUsage({ inputTokens: 100, outputTokens: 100, cacheReadTokens: 50 }, parsed.data)).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('offline providers', () => {
  it('a scripted or recorded session costs a known 0', () => {
    const records = [record(1, 'session.created', 'root', { task: 't', provider: { name: 'scripted' } }), responded(2, 'root', { inputTokens: 10, outputTokens: 1 })];
    expect(sessionCost(records).usd).toBe(0);
    expect(formatCost(sessionCost(records))).toBe('$0.0000');
  });
});

describe('cost in spans and for the offline providers', () => {
  it('each chat span carries its cost (rein.cost.usd) and its cache reads and writes next to gen_ai.usage.*', async () => {
    const workspace = await makeTempDir('rein-cost-spans-');
    try {
      const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 600_000, cacheWriteTokens: 100_000 };
      const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Done.', usage: { inputTokens: 1, outputTokens: 1 } }] } });
      // A script states no cache usage: the reply is given the usage a caching provider would have reported.
      const records = run.records.map((entry) => (entry.type === 'model.responded' ? { ...entry, data: { ...entry.data, usage } } : entry)) as RecordEnvelope[];
      const priced = spansOfRecords(records, { prices: { script: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } } }).filter((span) => span.name.startsWith('chat'));
      expect(priced).toHaveLength(1);
      // 300,000 plain × $3 + 600,000 read × $0.30 + 100,000 written × $3.75 + 100,000 out × $15, per million.
      expect(priced[0]!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 1_000_000, 'rein.usage.cache_read_tokens': 600_000, 'rein.usage.cache_write_tokens': 100_000 });
      expect(priced[0]!.attributes['rein.cost.usd']).toBeCloseTo(0.9 + 0.18 + 0.375 + 1.5, 9);
      // At the shipped prices the scripted provider costs a known 0; a session at an unpriced model has no cost attribute.
      expect(spansOfRecords(records).find((span) => span.name.startsWith('chat'))!.attributes['rein.cost.usd']).toBe(0);
      const unpriced = records.map((entry) => (entry.type === 'session.created' ? { ...entry, data: { ...(entry.data as object), provider: { name: 'openai', model: 'llama-local' } } } : entry));
      expect(spansOfRecords(unpriced as RecordEnvelope[]).find((span) => span.name.startsWith('chat'))!.attributes).not.toHaveProperty('rein.cost.usd');
    } finally {
      await workspace.remove();
    }
  });
});
