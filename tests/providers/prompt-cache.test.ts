import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { AnthropicPromptCache, OpenAIPromptCache, anthropicPromptBlocks, openAIPromptBlocks, sharedPrefixBytes } from '../../src/testing/prompt-cache.js';
import { anthropicConversation, anthropicReplyChunks, openAIConversation, openAIReplyChunks, type Conversation, type Reply } from '../support/loopback-model.js';
import { startLoopbackServer } from '../support/loopback-server.js';
import { runProviderSession } from '../support/provider-session.js';

/** A model that reads notes.txt `reads` times, then answers. */
const rereading = (reads: number) => ({ calls }: Conversation): Reply =>
  calls.length < reads ? { text: `Reading notes.txt (${calls.length + 1}).`, toolCalls: [{ id: `call_read${calls.length + 1}`, name: 'read', arguments: { path: 'notes.txt' } }] } : { text: 'Done: it says to remember the milk.' };

const cacheControls = (body: any): unknown[] => [
  ...(Array.isArray(body.system) ? body.system : []),
  ...body.messages.flatMap((message: any) => message.content),
  ...(body.tools ?? []),
].filter((block) => block.cache_control !== undefined);

describe('prompt caching against the loopback stand-ins', () => {
  it('an Anthropic session marks the stable parts with cache_control and reads its prefix from the cache on later turns', async () => {
    const cache = new AnthropicPromptCache();
    const model = rereading(4);
    const server = await startLoopbackServer((request) => {
      const reply = model(anthropicConversation(request.body));
      const used = cache.use(request.body);
      return { chunks: anthropicReplyChunks({ ...reply, usage: { prompt: used.read + used.written + used.uncached, completion: 20, cacheRead: used.read, cacheWrite: used.written } }) };
    });
    try {
      const provider = createAnthropicProvider({ model: 'claude-loopback-1', baseUrl: server.url, apiKey: 'sk-loop' });
      const { result, of } = await runProviderSession(provider);
      expect(result.status).toBe('completed');
      const bodies = server.requests.map((request) => request.body);
      expect(bodies).toHaveLength(5);
      for (const body of bodies) {
        // The system text is a block with a breakpoint; the history's last block has one; never more than four.
        expect(body.system[0]).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
        expect(cacheControls(body).length).toBeGreaterThanOrEqual(2);
        expect(cacheControls(body).length).toBeLessThanOrEqual(4);
        // The state that changes every round is last, after the breakpoints, and never in the system text.
        expect(body.system[0].text).not.toContain('model turns so far');
        expect(JSON.stringify(body.messages.at(-1).content.at(-1))).toContain('model turns so far');
      }
      // Every request repeats the previous one's prompt up to its volatile part.
      for (let index = 1; index < bodies.length; index++) {
        const previous = anthropicPromptBlocks(bodies[index - 1]);
        const next = anthropicPromptBlocks(bodies[index]);
        const stable = previous.slice(0, previous.length - 1);
        expect(sharedPrefixBytes(stable, next)).toBe(stable.reduce((sum, block) => sum + Buffer.byteLength(block.text), 0));
      }
      const usage = of('model.responded').map((data) => data.usage);
      expect(usage[0]).toMatchObject({ cacheWriteTokens: expect.any(Number) });
      expect(usage[0].cacheReadTokens).toBeUndefined();
      for (const later of usage.slice(1)) {
        expect(later.cacheReadTokens).toBeGreaterThan(0);
        expect(later.cacheReadTokens).toBeLessThanOrEqual(later.inputTokens);
      }
      // Each turn reads at least what the turn before it wrote and read.
      for (let index = 2; index < usage.length; index++) expect(usage[index].cacheReadTokens).toBeGreaterThanOrEqual(usage[index - 1].cacheReadTokens);
    } finally {
      await server.close();
    }
  });

  it('an OpenAI-compatible session keeps its prefix, sends prompt_cache_key only when asked, and records cached tokens', async () => {
    const cache = new OpenAIPromptCache();
    const model = rereading(3);
    const server = await startLoopbackServer((request) => {
      const used = cache.use(request.body);
      return { chunks: openAIReplyChunks({ ...model(openAIConversation(request.body)), usage: { prompt: used.read + used.uncached, completion: 20, cacheRead: used.read } }) };
    });
    try {
      const keyed = createOpenAICompatibleProvider({ model: 'gpt-loopback', baseUrl: server.url, apiKey: 'sk-loop', promptCacheKey: true });
      const { result, of } = await runProviderSession(keyed);
      expect(result.status).toBe('completed');
      const bodies = server.requests.map((request) => request.body);
      const keys = new Set(bodies.map((body) => body.prompt_cache_key));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^rein:s-[\w-]+:root$/);
      for (let index = 1; index < bodies.length; index++) {
        const previous = openAIPromptBlocks(bodies[index - 1]);
        const stable = previous.slice(0, previous.length - 1);
        expect(sharedPrefixBytes(stable, openAIPromptBlocks(bodies[index]))).toBe(stable.reduce((sum, block) => sum + Buffer.byteLength(block.text), 0));
      }
      const usage = of('model.responded').map((data) => data.usage);
      expect(usage.slice(1).every((entry) => entry.cacheReadTokens > 0)).toBe(true);
      // A compatible server that was not named: no prompt_cache_key (it may refuse unknown fields).
      const before = server.requests.length;
      await runProviderSession(createOpenAICompatibleProvider({ model: 'gpt-loopback', baseUrl: server.url, apiKey: 'sk-loop' }));
      expect(server.requests.slice(before).every((request) => request.body.prompt_cache_key === undefined)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
