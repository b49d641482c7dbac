import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ModelRequest } from '../../models/model-contract.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { SseParser } from '../../src/providers/sse-parser.js';
import { formatMs, median } from './bench-support.js';

const openAIBody = (deltas: number): string => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764101234,"model":"bench-1","service_tier":"default","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":null}\n\n`;
  const parts = [chunk({ role: 'assistant', content: '' })];
  for (let index = 0; index < deltas; index++) parts.push(chunk({ content: ` token${index % 97}` }));
  parts.push(chunk({}, 'stop'), `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764101234,"model":"bench-1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":${deltas},"total_tokens":${deltas + 10}}}\n\n`, 'data: [DONE]\n\n');
  return parts.join('');
};

const anthropicBody = (deltas: number): string => {
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const parts = [
    event('message_start', { type: 'message_start', message: { model: 'bench-1', id: 'msg_bench', type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (let index = 0; index < deltas; index++) parts.push(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ` token${index % 97}` } }));
  parts.push(event('content_block_stop', { type: 'content_block_stop', index: 0 }), event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }), event('message_stop', { type: 'message_stop' }));
  return parts.join('');
};

/** Serve each body in 16 KiB writes, the way a real server flushes a long reply. */
const serve = async (bodies: Record<string, Buffer>) => {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body = bodies[request.url ?? ''] ?? Buffer.alloc(0);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let offset = 0; offset < body.length; offset += 16_384) response.write(body.subarray(offset, offset + 16_384));
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

/**
 * The baseline: the same bytes over the same loopback connection, through a streaming decoder and the bare SSE
 * parser; with `decodeJson`, each event's data is also `JSON.parse`d (the floor any consumer of these streams pays).
 */
const bareParse = async (url: string, decodeJson = false): Promise<number> => {
  const response = await fetch(url, { method: 'POST', body: '{}' });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let events = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    const parsed = parser.push(decoder.decode(chunk.value, { stream: true }));
    if (decodeJson) for (const event of parsed) if (event.data !== '[DONE]') JSON.parse(event.data);
    events += parsed.length;
  }
  return events + parser.push(decoder.decode()).length + parser.end().length;
};

const request: ModelRequest = { runId: 'bench', turnId: 'e1', turn: 1, messages: [{ role: 'user', content: 'go' }], tools: [], options: {} };

const throughAdapter = async (provider: ModelProvider): Promise<number> => {
  let events = 0;
  for await (const event of provider.stream(request)) {
    if (event.type === 'error') throw new Error(event.error.message);
    events++;
  }
  return events;
};

/**
 * Adapter overhead: a 20,000-delta streamed reply from a loopback server, read (a) with a bare SSE parser and (b)
 * through each adapter to `ModelEvent`s, interleaved over several rounds. Prints events/s and the time ratio.
 * Target: ≤ 1.5× the bare parser.
 */
export const main = async (deltas = 20_000, rounds = 7): Promise<void> => {
  const bodies = { '/v1/chat/completions': Buffer.from(openAIBody(deltas)), '/v1/messages': Buffer.from(anthropicBody(deltas)) };
  const server = await serve(bodies);
  try {
    const adapters: Array<{ name: string; path: string; provider: ModelProvider }> = [
      { name: 'openai-compatible', path: '/v1/chat/completions', provider: createOpenAICompatibleProvider({ model: 'bench-1', baseUrl: `${server.url}/v1` }) },
      { name: 'anthropic', path: '/v1/messages', provider: createAnthropicProvider({ model: 'bench-1', baseUrl: server.url }) },
    ];
    process.stdout.write(`provider adapters: a ${deltas}-delta streamed reply over loopback HTTP, median of ${rounds} interleaved rounds\n`);
    for (const adapter of adapters) {
      const bytes = bodies[adapter.path as keyof typeof bodies].length;
      const bare: number[] = [];
      const decoded: number[] = [];
      const through: number[] = [];
      let sseEvents = 0;
      let modelEvents = 0;
      await bareParse(`${server.url}${adapter.path}`);
      await throughAdapter(adapter.provider);
      for (let round = 0; round < rounds; round++) {
        let started = performance.now();
        sseEvents = await bareParse(`${server.url}${adapter.path}`);
        bare.push(performance.now() - started);
        started = performance.now();
        await bareParse(`${server.url}${adapter.path}`, true);
        decoded.push(performance.now() - started);
        started = performance.now();
        modelEvents = await throughAdapter(adapter.provider);
        through.push(performance.now() - started);
      }
      const rate = (ms: number) => `${Math.round(sseEvents / (ms / 1000)).toLocaleString('en')} events/s`;
      const bareMedian = median(bare);
      const decodedMedian = median(decoded);
      const throughMedian = median(through);
      process.stdout.write(`  ${adapter.name} (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${sseEvents} SSE events → ${modelEvents} model events)\n`);
      process.stdout.write(`    bare SSE parser ${formatMs(bareMedian)} (${rate(bareMedian)}) · bare parser + JSON.parse ${formatMs(decodedMedian)} (${rate(decodedMedian)}) · adapter ${formatMs(throughMedian)} (${rate(throughMedian)})\n`);
      process.stdout.write(`    ratio vs bare parser ${(throughMedian / bareMedian).toFixed(2)}× (target ≤ 1.5×) · vs parser + JSON.parse ${(throughMedian / decodedMedian).toFixed(2)}×\n`);
    }
  } finally {
    await server.close();
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
