import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/index.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';

/** An endpoint that never reports usage (many local servers): a long answer and one tool call per turn. */
const silent: ModelProvider = {
  name: 'silent',
  model: 'silent',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    yield { type: 'started', model: 'silent' };
    yield { type: 'text-delta', text: 'x'.repeat(400) };
    yield { type: 'tool-intent', providerCallId: `p${request.turn}`, name: 'glob', arguments: { pattern: '*' } };
    yield { type: 'finished', stopReason: 'tool_use' };
  },
};

/** An endpoint that reports usage of zeros (several local servers in streaming mode, a proxy that strips counts). */
const zeros: ModelProvider = {
  ...silent,
  name: 'zeros',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    for await (const event of silent.stream(request)) {
      if (event.type === 'finished') yield { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } };
      yield event;
    }
  },
};

describe('an endpoint that reports no usage, or zeros', () => {
  it.each([['no usage (trial 5 E13)', silent], ['usage of zeros (trial 6 F20)', zeros]] as const)('%s is charged rein\'s own estimate, marked as such, so the token budget still holds', async (_, provider) => {
    const workspace = await makeTempDir('rein-no-usage-');
    try {
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, provider, budgets: { maxTokens: 500, maxTurns: 20 } });
      const session = await rein.startSession({ task: 'loop' });
      const result = await session.whenQuiet();
      expect(result.status).toBe('budget-exhausted');
      expect(result.usage.turns).toBeLessThan(20);
      expect(result.usage.inputTokens + result.usage.outputTokens).toBeGreaterThan(500);
      const responded = (await store.read(session.id)).filter((record) => record.type === 'model.responded');
      expect(responded.length).toBeGreaterThan(0);
      for (const record of responded) expect((record.data as { usage: unknown }).usage).toMatchObject({ outputTokens: expect.any(Number), estimated: true });
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
