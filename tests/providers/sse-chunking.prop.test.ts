import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelEvent } from '../../models/model-contract.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { SseParser } from '../../src/providers/sse-parser.js';
import { transcript } from '../support/loopback-server.js';
import { collect, sampleRequest } from '../support/provider-session.js';
import { propertyRuns } from '../support/temp-dir.js';

/** Cut `bytes` at the given offsets (sorted, deduplicated): chunk boundaries may fall anywhere, inside characters too. */
const split = (bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] => {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((left, right) => left - right);
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const point of [...points, bytes.length]) {
    if (point > previous) chunks.push(bytes.subarray(previous, point));
    previous = point;
  }
  return chunks;
};

/** A fetch that answers with `chunks` as the streamed body: the adapter's real code path, minus the socket. */
const fetchOf = (chunks: readonly Uint8Array[]): typeof fetch => async () =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }),
    { status: 200, headers: { 'content-type': 'text/event-stream' } },
  );

const cases: Array<{ file: string; provider: (fetchImpl: typeof fetch) => ModelProvider }> = [
  ...['tool-call', 'parallel-tool-calls', 'empty-arguments', 'utf8', 'reasoning', 'no-finish'].map((name) => ({
    file: `openai/${name}.sse`,
    provider: (fetchImpl: typeof fetch) => createOpenAICompatibleProvider({ model: 'm', baseUrl: 'http://127.0.0.1:9/v1', fetch: fetchImpl }),
  })),
  ...['tool-use', 'parallel-tool-use', 'empty-input', 'thinking', 'utf8', 'no-stop', 'error-mid-stream'].map((name) => ({
    file: `anthropic/${name}.sse`,
    provider: (fetchImpl: typeof fetch) => createAnthropicProvider({ model: 'm', baseUrl: 'http://127.0.0.1:9', fetch: fetchImpl }),
  })),
];

const intents = (events: readonly ModelEvent[]) => events.filter((event) => event.type === 'tool-intent');

describe('chunking never changes what an adapter assembles', () => {
  for (const { file, provider } of cases) {
    it(`${file}: any chunking yields the same events and intents as one chunk`, async () => {
      const bytes = Buffer.from(transcript(file), 'utf8');
      const whole = await collect(provider(fetchOf([bytes])), sampleRequest());
      expect(whole.length).toBeGreaterThan(2);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
          const events = await collect(provider(fetchOf(split(bytes, cuts))), sampleRequest());
          expect(intents(events)).toEqual(intents(whole));
          expect(events).toEqual(whole);
        }),
        { numRuns: propertyRuns(60) },
      );
    });
  }

  it('the bare parser yields the same events for any split of any event stream', () => {
    const line = fc.oneof(
      fc.string({ maxLength: 12 }).map((text) => `data: ${text.replace(/[\r\n]/g, '')}`),
      fc.constantFrom('event: delta', ': comment', 'id: 4', 'retry: 10', ''),
    );
    const ending = fc.constantFrom('\n', '\r\n', '\r');
    const document = fc.array(fc.tuple(line, ending), { maxLength: 30 }).map((lines) => lines.map(([text, end]) => text + end).join(''));
    fc.assert(
      fc.property(document, fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
        const once = new SseParser();
        const expected = [...once.push(text), ...once.end()];
        const pieces = new SseParser();
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((left, right) => left - right);
        const events = [];
        let previous = 0;
        for (const point of [...points, text.length]) {
          events.push(...pieces.push(text.slice(previous, point)));
          previous = point;
        }
        events.push(...pieces.end());
        expect(events).toEqual(expected);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
