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

describe('an endpoint that reports no usage', () => {
  it('is charged rein\'s own estimate, marked as such, so the token budget still holds (trial 5 E13)', async () => {
    const workspace = await makeTempDir('rein-no-usage-');
    try {
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, provider: silent, budgets: { maxTokens: 500, maxTurns: 20 } });
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
