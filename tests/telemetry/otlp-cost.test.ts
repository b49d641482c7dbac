import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { Prices } from '../../models/price-table.js';
import { exportTrace } from '../../src/cli/trace-export.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { createOtlpExporter } from '../../src/telemetry/telemetry.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A model named `model` under a vendor's name: reads a.txt, then answers; every reply uses 1,000 in and 100 out, 400 of the input read from the prompt cache. */
const provider = (name: string, model: string): ModelProvider => ({
  name,
  model,
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    yield { type: 'started', model };
    if (request.turn === 1) yield { type: 'tool-intent', providerCallId: 'p0', name: 'read', arguments: { path: 'a.txt' } };
    else yield { type: 'text-delta', text: 'Done.' };
    yield { type: 'usage', usage: { inputTokens: 1_000, outputTokens: 100, cacheReadTokens: 400 } };
    yield { type: 'finished', stopReason: request.turn === 1 ? 'tool_use' : 'end_turn' };
  },
});

type Attribute = { key: string; value: { doubleValue?: number; intValue?: string | number; boolValue?: boolean; stringValue?: string } };
type JsonSpan = { name: string; attributes: Attribute[] };

/** The chat spans the collector received over OTLP/JSON, each with its attributes by key. */
const chatSpans = (receiver: OtlpReceiver): Array<Record<string, Attribute['value']>> =>
  receiver.requests
    .flatMap((request) => (request.json?.resourceSpans ?? []) as Array<{ scopeSpans: Array<{ spans: JsonSpan[] }> }>)
    .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
    .filter((span) => span.name.startsWith('chat '))
    .map((span) => Object.fromEntries(span.attributes.map((attribute) => [attribute.key, attribute.value])));

/** Dollars of one reply at `price` (per million): 600 plain input, 400 cache reads, 100 output. */
const replyCost = (price: { input: number; output: number; cacheRead?: number }) => (600 * price.input + 400 * (price.cacheRead ?? price.input) + 100 * price.output) / 1_000_000;

describe('cost in the spans a collector receives (OTLP/HTTP on 127.0.0.1)', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-otlp-cost-');
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    await workspace.remove();
  });

  const runLive = async (name: string, model: string, prices?: Prices) => {
    const store = createMemoryEventStore();
    const exporter = await createOtlpExporter({ endpoint: receiver.url, protocol: 'http/json', useEnvironment: false });
    const rein = await createRein({ store, workspace: workspace.path, provider: provider(name, model), memory: false, telemetry: { exporter }, ...(prices ? { prices } : {}) });
    const session = await rein.startSession({ task: 'read a.txt' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect((await rein.telemetry!.shutdown(5_000)).dropped).toBe(0);
    return { store, session };
  };

  it('a model with a shipped price: every chat span carries a non-zero rein.cost.usd at the shipped price, with its cache reads', async () => {
    await runLive('anthropic', 'claude-sonnet-4-5-20250929');
    const chats = chatSpans(receiver);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      // claude-sonnet-4-5 (dated names match by prefix): $3 in, $15 out, $0.30 cache reads per million.
      expect(chat['rein.cost.usd']!.doubleValue).toBeCloseTo(replyCost({ input: 3, output: 15, cacheRead: 0.3 }), 12);
      expect(chat['rein.cost.usd']!.doubleValue).toBeGreaterThan(0);
      expect(Number(chat['rein.usage.cache_read_tokens']!.intValue)).toBe(400);
      expect(chat['rein.cost.unknown']).toBeUndefined();
    }
  });

  it('a model with no price: the cost is unknown (rein.cost.unknown), never 0', async () => {
    await runLive('openai-compatible', 'my-local-model');
    const chats = chatSpans(receiver);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat).not.toHaveProperty('rein.cost.usd');
      expect(chat['rein.cost.unknown']).toEqual({ boolValue: true });
    }
  });

  it('live spans are priced at the harness\'s prices (configuration over the shipped table), as rein show and rein trace are', async () => {
    await runLive('openai-compatible', 'my-local-model', { 'my-local-model': { input: 2, output: 8 } });
    for (const chat of chatSpans(receiver)) expect(chat['rein.cost.usd']!.doubleValue).toBeCloseTo(replyCost({ input: 2, output: 8 }), 12);
  });

  it('rein trace --otlp exports a stored session at the prices it is given (the configuration\'s)', async () => {
    const { store, session } = await runLive('openai-compatible', 'my-local-model');
    const live = receiver.requests.length;
    const records = await store.read(session.id);
    const out = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      await exportTrace(session.id, records, { otlp: receiver.url }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, { 'my-local-model': { input: 2, output: 8 } });
    } finally {
      process.stdout.write = out;
    }
    const exported = chatSpans({ ...receiver, requests: receiver.requests.slice(live) });
    expect(exported).toHaveLength(2);
    for (const chat of exported) {
      expect(chat['rein.cost.usd']!.doubleValue).toBeCloseTo(replyCost({ input: 2, output: 8 }), 12);
      expect(chat).not.toHaveProperty('rein.cost.unknown');
    }
  });
});
