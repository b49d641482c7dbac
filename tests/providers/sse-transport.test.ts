import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { collect, runProviderSession, sampleRequest } from '../support/provider-session.js';

/* A trial of main 0bd2607: a base URL on a port fetch refuses outright (the Fetch standard's "bad ports": 1, 6000,
 * 6665–6669, 10080, …) was a retryable `network` failure reading "bad port", retried 5 times for 10 s before the
 * session failed. No retry can help: it fails at once, saying why and what to do. */
describe('the SSE transport', () => {
  it('a base URL on a port fetch refuses is bad_request at once, naming the port, for both adapters', async () => {
    for (const provider of [
      createOpenAICompatibleProvider({ model: 'm', baseUrl: 'http://127.0.0.1:6000/v1', apiKey: 'k' }),
      createAnthropicProvider({ model: 'm', baseUrl: 'http://127.0.0.1:6666', apiKey: 'k' }),
    ]) {
      const [event] = await collect(provider, sampleRequest());
      expect(event).toMatchObject({ type: 'error', error: { code: 'bad_request', retryable: false } });
      const message = (event as { error: { message: string } }).error.message;
      expect(message).toMatch(/port (6000|6666)/);
      expect(message).toContain('another port');
    }
  });

  it('a session on such a port fails after one attempt, not five', async () => {
    const session = await runProviderSession(createOpenAICompatibleProvider({ model: 'm', baseUrl: 'http://127.0.0.1:6000/v1', apiKey: 'k' }));
    expect(session.result.status).toBe('failed');
    expect(session.of('model.attempted').map((attempt) => attempt.decision)).toEqual(['fail']);
  });
});
