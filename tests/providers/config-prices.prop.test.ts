import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPrices } from '../../models/price-table.js';
import { configuredPrices } from '../../src/cli/config-prices.js';
import { loadWorkspaceConfig } from '../../src/providers/provider-settings.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider } from '../../src/providers/scripted-provider.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };

beforeAll(async () => {
  workspace = await makeTempDir('rein-config-prices-');
});

afterAll(async () => {
  await workspace.remove();
});

/** What both readers of `prices` (the zod schema of `rein run`, the schema-free one of `rein show`) make of `prices`. */
const readBoth = async (prices: unknown): Promise<{ schema: unknown; plain: unknown }> => {
  // JSON has no Infinity: a file says 1e999, which JSON.parse reads as Infinity (JSON.stringify would write null).
  const text = JSON.stringify({ prices }, (_, value: unknown) => (value === Number.POSITIVE_INFINITY ? '__inf__' : value === Number.NEGATIVE_INFINITY ? '__-inf__' : value))
    .replaceAll('"__inf__"', '1e999')
    .replaceAll('"__-inf__"', '-1e999');
  await writeFile(join(workspace.path, 'rein.config.json'), text);
  const outcome = async (read: () => Promise<unknown>) => read().then((value) => ({ ok: value }), (error: { code?: string }) => ({ code: error.code }));
  return { schema: await outcome(() => loadWorkspaceConfig(workspace.path)), plain: await outcome(() => configuredPrices(workspace.path)) };
};

const goodPrice = fc.record({ input: fc.double({ min: 0, max: 1e6, noNaN: true }), output: fc.double({ min: 0, max: 1e6, noNaN: true }) }, { requiredKeys: ['input', 'output'] });

describe('prices in rein.config.json: merged over the shipped table, bad input refused as CONFIG_INVALID by every reader', () => {
  it('a good table is merged over the defaults (a configured model wins, the others stay)', async () => {
    const both = await readBoth({ 'gpt-5': { input: 9, output: 9 }, 'my-model': { input: 0.5, output: 2, cacheRead: 0.05 } });
    expect(both.schema).toMatchObject({ ok: { prices: { 'my-model': { input: 0.5, output: 2, cacheRead: 0.05 } } } });
    const plain = (both.plain as { ok: Record<string, unknown> }).ok;
    expect(plain['gpt-5']).toEqual({ input: 9, output: 9 });
    expect(plain['claude-sonnet-4-5']).toEqual(defaultPrices['claude-sonnet-4-5']);
    expect(plain['my-model']).toEqual({ input: 0.5, output: 2, cacheRead: 0.05 });
  });

  it('negative, non-finite, missing or unknown fields, or a price that is no object: CONFIG_INVALID from both readers', async () => {
    const bad = fc.oneof(
      goodPrice.map((price) => ({ ...price, input: -1 - price.input })),
      goodPrice.map((price) => ({ ...price, output: Number.POSITIVE_INFINITY })),
      goodPrice.map((price) => ({ ...price, cacheWrite: Number.NEGATIVE_INFINITY })),
      goodPrice.chain((price) => fc.string({ minLength: 1 }).filter((key) => !['input', 'output', 'cacheRead', 'cacheWrite'].includes(key)).map((key) => ({ ...price, [key]: 1 }))),
      goodPrice.map((price) => ({ output: price.output })),
      goodPrice.map((price) => ({ ...price, input: String(price.input) })),
      fc.constantFrom(null, 3, 'cheap', [1, 2], true),
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 20 }), bad, async (model, price) => {
        fc.pre(model !== '__proto__');
        const both = await readBoth({ [model]: price });
        expect(both.schema).toEqual({ code: 'CONFIG_INVALID' });
        expect(both.plain).toEqual({ code: 'CONFIG_INVALID' });
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('createRein({ prices }) checks a table the same way (USAGE naming the field)', async () => {
    const base = { store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'ok' }] }) };
    await expect(createRein({ ...base, prices: { m: { input: -1, output: 1 } } })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('prices') });
    await expect(createRein({ ...base, prices: { m: { input: 1, output: 1, bogus: 1 } as never } })).rejects.toMatchObject({ code: 'USAGE' });
    await expect(createRein({ ...base, budgets: { maxCostUsd: 0 } })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('maxCostUsd') });
    await expect(createRein({ ...base, budgets: { maxCostUsd: Number.NaN } })).rejects.toMatchObject({ code: 'USAGE' });
  });
});
