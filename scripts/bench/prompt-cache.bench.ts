import { createServer, type IncomingMessage } from 'node:http';
import { loadavg } from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { tokenCounterFor } from '../../src/projections/token-counter.js';
import { toolsJson } from '../../src/projections/tools-json.js';
import { AnthropicPromptCache, OpenAIPromptCache, anthropicPromptBlocks, openAIPromptBlocks, sharedPrefixBytes, type PromptBlock } from '../../src/testing/prompt-cache.js';

type Body = Record<string, any>;
const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const oaChunk = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/** The model: `read` one file per turn until `turns` calls were made, then an answer. */
const replyOf = (calls: number, turns: number) => (calls < turns - 1 ? { text: `Reading part ${calls + 1}.`, call: { name: 'read', arguments: { path: 'notes.txt' } } } : { text: 'Done.', call: undefined });

const anthropicStream = (reply: ReturnType<typeof replyOf>, usage: { read: number; written: number; uncached: number }, id: number): string => {
  let out = event('message_start', { type: 'message_start', message: { id: `msg_${id}`, type: 'message', role: 'assistant', model: 'claude-loopback', content: [], stop_reason: null, usage: { input_tokens: usage.uncached, cache_read_input_tokens: usage.read, cache_creation_input_tokens: usage.written, output_tokens: 1 } } });
  out += event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  out += event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } });
  out += event('content_block_stop', { type: 'content_block_stop', index: 0 });
  if (reply.call) {
    out += event('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: `toolu_${id}`, name: reply.call.name, input: {} } });
    out += event('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.call.arguments) } });
    out += event('content_block_stop', { type: 'content_block_stop', index: 1 });
  }
  out += event('message_delta', { type: 'message_delta', delta: { stop_reason: reply.call ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 20 } });
  return out + event('message_stop', { type: 'message_stop' });
};

const openAIStream = (reply: ReturnType<typeof replyOf>, usage: { read: number; uncached: number }, id: number): string => {
  const base = { id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-loopback' };
  let out = oaChunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: reply.text }, finish_reason: null }] });
  if (reply.call) out += oaChunk({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: `call_${id}`, type: 'function', function: { name: reply.call.name, arguments: JSON.stringify(reply.call.arguments) } }] }, finish_reason: null }] });
  out += oaChunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: reply.call ? 'tool_calls' : 'stop' }] });
  out += oaChunk({ ...base, choices: [], usage: { prompt_tokens: usage.read + usage.uncached, completion_tokens: 20, prompt_tokens_details: { cached_tokens: usage.read } } });
  return `${out}data: [DONE]\n\n`;
};

const bodyOf = async (request: IncomingMessage): Promise<Body> => {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Body;
};

/** A loopback stand-in for one vendor: answers with `stream(body)` and keeps every request body. */
const serve = async (stream: (body: Body, index: number) => string) => {
  const bodies: Body[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      bodies.push(body);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(stream(body, bodies.length));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return { url, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

const size = (blocks: readonly PromptBlock[]): number => blocks.reduce((sum, block) => sum + Buffer.byteLength(block.text), 0);

/** Over consecutive requests: the share of each request's bytes that repeat the previous request's, byte for byte from the start. */
const prefixShare = (blocks: readonly PromptBlock[][]): number => {
  let shared = 0;
  let total = 0;
  for (let index = 1; index < blocks.length; index++) {
    shared += sharedPrefixBytes(blocks[index - 1]!, blocks[index]!);
    total += size(blocks[index]!);
  }
  return total === 0 ? 0 : shared / total;
};

const runSession = async (provider: ModelProvider, workspace: string) => {
  const rein = await createRein({ store: createMemoryEventStore(), workspace, provider, memory: false });
  const session = await rein.startSession({ task: 'Read notes.txt again and again, then say done.' });
  const result = await session.whenQuiet();
  if (result.status !== 'completed') throw new Error(`the bench session ended ${result.status}`);
};

/**
 * A prefix the provider can cache (docs/model-input.md: *A prefix the provider can cache*): a `turns`-turn session (one `read` per
 * turn, no compaction) against loopback stand-ins of Anthropic's Messages API and an OpenAI-compatible endpoint, each
 * with a stand-in of the vendor's prompt cache. Prints the share of each request's bytes that repeat the previous
 * request's prefix, the share of input tokens the cache served, and — as the baseline in the same run — the same
 * Anthropic session with `promptCache: false` (no `cache_control` breakpoints: the API caches nothing). Also the fixed
 * prefix's tokens as the first request sent them (its system text and its tool definitions as JSON, o200k), and where
 * they go: the environment block and each tool.
 */
export const main = async (turns = 50): Promise<void> => {
  process.stdout.write(`prompt cache: a ${turns}-turn session against loopback stand-ins; load average ${loadavg()[0]!.toFixed(2)}\n`);
  const workspace = await mkdtemp(join(tmpdir(), 'rein-bench-cache-'));
  await writeFile(join(workspace, 'notes.txt'), 'remember the milk\n'.repeat(20));
  try {
    const anthropic = async (cache: boolean) => {
      const stand = new AnthropicPromptCache();
      const usage = { read: 0, input: 0 };
      const server = await serve((body, index) => {
        const used = stand.use(body as never);
        usage.read += used.read;
        usage.input += used.read + used.written + used.uncached;
        const calls = (body.messages as Body[]).filter((message) => message.role === 'assistant').length;
        return anthropicStream(replyOf(calls, turns), used, index);
      });
      await runSession(createAnthropicProvider({ model: 'claude-loopback', baseUrl: server.url, apiKey: 'sk-bench', promptCache: cache }), workspace);
      await server.close();
      return { share: prefixShare(server.bodies.map((body) => anthropicPromptBlocks(body as never))), cached: usage.read / usage.input, requests: server.bodies.length, first: server.bodies[0]! };
    };
    const openai = async () => {
      const stand = new OpenAIPromptCache();
      const usage = { read: 0, input: 0 };
      const server = await serve((body, index) => {
        const used = stand.use(body as never);
        usage.read += used.read;
        usage.input += used.read + used.uncached;
        const calls = (body.messages as Body[]).filter((message) => message.role === 'assistant').length;
        return openAIStream(replyOf(calls, turns), used, index);
      });
      await runSession(createOpenAICompatibleProvider({ model: 'gpt-loopback', baseUrl: server.url, apiKey: 'sk-bench', promptCacheKey: true }), workspace);
      await server.close();
      return { share: prefixShare(server.bodies.map((body) => openAIPromptBlocks(body as never))), cached: usage.read / usage.input, requests: server.bodies.length };
    };
    const without = await anthropic(false);
    const marked = await anthropic(true);
    const compatible = await openai();
    const pct = (value: number) => `${(100 * value).toFixed(1)}%`.padStart(6);
    process.stdout.write(`  anthropic, no breakpoints (baseline)  prefix repeated ${pct(without.share)}  input served from the cache ${pct(without.cached)}  (${without.requests} requests)\n`);
    process.stdout.write(`  anthropic, cache_control breakpoints  prefix repeated ${pct(marked.share)}  input served from the cache ${pct(marked.cached)}  (baseline ${pct(without.cached).trim()})\n`);
    process.stdout.write(`  openai-compatible, prompt_cache_key    prefix repeated ${pct(compatible.share)}  input served from the cache ${pct(compatible.cached)}  (${compatible.requests} requests)\n`);
    const counter = await tokenCounterFor('gpt-4o');
    const first = marked.first;
    const system = (first.system as Array<{ text: string }>).map((block) => block.text).join('');
    const tools = (first.tools as Array<{ name: string; description: string; input_schema: unknown }>).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input_schema as Record<string, unknown> }));
    process.stdout.write(`  fixed prefix: system message ${counter.count(system)} + ${tools.length} built-in tools ${counter.count(toolsJson(tools))} = ${counter.count(system) + counter.count(toolsJson(tools))} tokens (o200k; goal 2,500)\n`);
    // Where the tokens go: the environment block inside the system message, and each tool's definition on its own.
    const environment = /<environment[^>]*>[\s\S]*?<\/environment>/.exec(system)?.[0] ?? '';
    const each = tools.map((tool) => `${tool.name} ${counter.count(JSON.stringify(tool))}`).join(', ');
    process.stdout.write(`    system message: rules and goal ${counter.count(system.replace(environment, ''))}, environment ${counter.count(environment)}; tools: ${each}\n`);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 50));
