import type { Exchange } from './loopback-server.js';

/** A reply a loopback model gives: text and complete tool calls. */
export interface Reply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  usage?: { prompt: number; completion: number };
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
  chunks.push(chunk(id, choice({}, (reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop')));
  const usage = reply.usage ?? { prompt: 100, completion: 20 };
  chunks.push(chunk(id, [], { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion }));
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

interface WireMessage {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ function: { name: string } }>;
}

/**
 * A model that does a read → write → verify task on `path`: it reads the file, writes it back in capitals (from
 * what the read returned), reads it again, and reports whether the file now holds the capitals. It decides from the
 * request alone, so retries and resumed runs get the same answers.
 */
export const shoutingModel = (path: string) => (body: { messages: WireMessage[] }): Reply => {
  const tools = body.messages.filter((message) => message.role === 'tool');
  const calls = body.messages.flatMap((message) => message.tool_calls ?? []).map((call) => call.function.name);
  const lastTool = tools.at(-1)?.content ?? '';
  if (calls.length === 0) return { text: `Reading ${path} first.`, toolCalls: [{ id: 'call_read1', name: 'read', arguments: { path } }] };
  if (calls.length === 1) {
    const original = readText(lastTool);
    return { text: 'Writing it in capitals.', toolCalls: [{ id: 'call_write1', name: 'write', arguments: { path, content: `${original.toUpperCase()}\n` } }] };
  }
  if (calls.length === 2) return { text: 'Verifying.', toolCalls: [{ id: 'call_read2', name: 'read', arguments: { path } }] };
  const now = readText(lastTool);
  return { text: now.length > 0 && now === now.toUpperCase() ? `Verified: ${path} now reads "${now}".` : `Verification failed: ${path} reads "${now}".` };
};

/** Serve `model`'s replies as streaming chat completions. */
export const modelExchange = (model: (body: any) => Reply, options: Omit<Exchange, 'chunks'> = {}) => (request: { body: any }): Exchange => ({ ...options, chunks: openAIReplyChunks(model(request.body)) });
