import type { Exchange } from './loopback-server.js';

/** A reply a loopback model gives: text and complete tool calls. */
export interface Reply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  /** `prompt` is the whole input; `cacheRead` / `cacheWrite` the parts of it a prompt cache read or wrote. */
  usage?: { prompt: number; completion: number; cacheRead?: number; cacheWrite?: number };
  /** The vendor's finish reason when it is not the natural one (`length` / `max_tokens`: the output limit cut the reply). */
  finish?: string;
}

const chunk = (id: string, choices: unknown[], usage: unknown = null) =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1764101234, model: 'loopback-1', service_tier: 'default', system_fingerprint: 'fp_loop', choices, usage })}\n\n`;
const choice = (delta: unknown, finish: string | null = null) => [{ index: 0, delta, logprobs: null, finish_reason: finish }];

/**
 * A reply as an OpenAI chat-completions event stream, in the real chunk shape: role chunk, text in pieces of
 * `pieceLength`, each tool call as a start chunk then argument chunks, the finish reason, the usage chunk, `[DONE]`.
 */
export const openAIReplyChunks = (reply: Reply, pieceLength = 8): string[] => {
  const id = `chatcmpl-loop${Math.abs(JSON.stringify(reply).length)}`;
  const chunks = [chunk(id, choice({ role: 'assistant', content: '', refusal: null }))];
  const text = reply.text ?? '';
  for (let index = 0; index < text.length; index += pieceLength) chunks.push(chunk(id, choice({ content: text.slice(index, index + pieceLength) })));
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    chunks.push(chunk(id, choice({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })));
    const json = JSON.stringify(call.arguments);
    for (let offset = 0; offset < json.length; offset += pieceLength) chunks.push(chunk(id, choice({ tool_calls: [{ index, function: { arguments: json.slice(offset, offset + pieceLength) } }] })));
  }
  chunks.push(chunk(id, choice({}, reply.finish ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop'))));
  const usage = reply.usage ?? { prompt: 100, completion: 20 };
  chunks.push(chunk(id, [], { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion, ...(usage.cacheRead === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 } }) }));
  chunks.push('data: [DONE]\n\n');
  return chunks;
};

/** The text of a `read` observation (`<line> <tag> | <text>` lines) without line numbers and tags. */
export const readText = (observation: string): string =>
  observation
    .split('\n')
    .filter((line) => / \| /.test(line))
    .map((line) => line.slice(line.indexOf(' | ') + 3))
    .join('\n');

/** What a loopback model reads from a request, whatever the wire format: the tools called so far, the last result. */
export interface Conversation {
  calls: string[];
  lastToolResult: string;
}

/** A chat-completions request body as a conversation. */
export const openAIConversation = (body: { messages: Array<{ role: string; content?: string | null; tool_calls?: Array<{ function: { name: string } }> }> }): Conversation => ({
  calls: body.messages.flatMap((message) => message.tool_calls ?? []).map((call) => call.function.name),
  lastToolResult: body.messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '',
});

/** A Messages request body as a conversation. */
export const anthropicConversation = (body: { messages: Array<{ role: string; content: Array<{ type: string; name?: string; content?: string }> }> }): Conversation => {
  const blocks = body.messages.flatMap((message) => message.content);
  return { calls: blocks.filter((block) => block.type === 'tool_use').map((block) => block.name ?? ''), lastToolResult: blocks.filter((block) => block.type === 'tool_result').at(-1)?.content ?? '' };
};

/**
 * A model that does a read → write → verify task on `path`: it reads the file, writes it back in capitals (from
 * what the read returned), reads it again, and reports whether the file now holds the capitals. It decides from the
 * conversation alone, so retries and resumed runs get the same answers.
 */
export const shoutingPolicy = (path: string) => ({ calls, lastToolResult }: Conversation): Reply => {
  if (calls.length === 0) return { text: `Reading ${path} first.`, toolCalls: [{ id: 'call_read1', name: 'read', arguments: { path } }] };
  if (calls.length === 1) {
    const original = readText(lastToolResult);
    return { text: 'Writing it in capitals.', toolCalls: [{ id: 'call_write1', name: 'write', arguments: { path, content: `${original.toUpperCase()}\n` } }] };
  }
  if (calls.length === 2) return { text: 'Verifying.', toolCalls: [{ id: 'call_read2', name: 'read', arguments: { path } }] };
  const now = readText(lastToolResult);
  return { text: now.length > 0 && now === now.toUpperCase() ? `Verified: ${path} now reads "${now}".` : `Verification failed: ${path} reads "${now}".` };
};

/** `shoutingPolicy` over chat-completions requests. */
export const shoutingModel = (path: string) => (body: any): Reply => shoutingPolicy(path)(openAIConversation(body));

/**
 * A reply as an Anthropic Messages event stream in the real shape: message_start, a text block in pieces, each tool
 * call as a tool_use block with input_json_delta pieces, message_delta with the stop reason, message_stop.
 */
export const anthropicReplyChunks = (reply: Reply, pieceLength = 8): string[] => {
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const chunks = [event('message_start', { type: 'message_start', message: { model: 'claude-loopback-1', id: 'msg_loop', type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: (reply.usage?.prompt ?? 100) - (reply.usage?.cacheRead ?? 0) - (reply.usage?.cacheWrite ?? 0), cache_creation_input_tokens: reply.usage?.cacheWrite ?? 0, cache_read_input_tokens: reply.usage?.cacheRead ?? 0, output_tokens: 1 } } })];
  let index = 0;
  const text = reply.text ?? '';
  if (text) {
    chunks.push(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (let offset = 0; offset < text.length; offset += pieceLength) chunks.push(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: text.slice(offset, offset + pieceLength) } }));
    chunks.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    chunks.push(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id.replace('call_', 'toolu_'), name: call.name, input: {} } }));
    const json = JSON.stringify(call.arguments);
    for (let offset = 0; offset < json.length; offset += pieceLength) chunks.push(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(offset, offset + pieceLength) } }));
    chunks.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  chunks.push(event('message_delta', { type: 'message_delta', delta: { stop_reason: reply.finish ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null }, usage: { output_tokens: reply.usage?.completion ?? 20 } }));
  chunks.push(event('message_stop', { type: 'message_stop' }));
  return chunks;
};

/** Serve `model`'s replies as streaming chat completions. */
export const modelExchange = (model: (body: any) => Reply, options: Omit<Exchange, 'chunks'> = {}) => (request: { body: any }): Exchange => ({ ...options, chunks: openAIReplyChunks(model(request.body)) });
