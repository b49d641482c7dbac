import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/index.js';
import type { ModelEvent } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';

const answering = (name: string, source: string): ModelProvider => ({
  name,
  model: 'm',
  source,
  async *stream(): AsyncIterable<ModelEvent> {
    yield { type: 'text-delta', text: 'ok' };
    yield { type: 'finished', stopReason: 'end_turn' };
  },
});

describe('what session.created records about its providers', () => {
  it('a URL source is reduced to origin and path, for the provider and every fallback, whoever built them', async () => {
    const dir = await makeTempDir('rein-identity-');
    try {
      const store = createMemoryEventStore();
      const rein = await createRein({
        store,
        workspace: dir.path,
        provider: answering('custom', 'https://user:sk-secret@llm.example/v1/?key=sk-query#frag'),
        fallbacks: [answering('spare', 'http://127.0.0.1:9/v1?token=t0k'), answering('scripted', 'scripts/s.json')],
      });
      const session = await rein.startSession({ task: 'hi' });
      await session.whenQuiet();
      const [created] = await store.read(session.id, { limit: 1 });
      expect(created!.data).toMatchObject({
        provider: { name: 'custom', model: 'm', source: 'https://llm.example/v1', fallbacks: [{ name: 'spare', source: 'http://127.0.0.1:9/v1' }, { name: 'scripted', source: 'scripts/s.json' }] },
      });
      expect(JSON.stringify(await store.read(session.id))).not.toMatch(/sk-secret|sk-query|t0k/);
    } finally {
      await dir.remove();
    }
  });
});
