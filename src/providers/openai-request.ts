import { createHash } from 'node:crypto';
import type { ModelMessage, ModelRequest } from '../../models/model-contract.js';
import { wireCallId, wireSchema } from './wire-format.js';

/** Core messages as chat-completions messages: tool calls carry their arguments as a JSON string. */
export const openAIMessages = (messages: readonly ModelMessage[]): Array<Record<string, unknown>> =>
  messages.map((message) => {
    if (message.role === 'tool') return { role: 'tool', tool_call_id: wireCallId(message.callId), content: message.content };
    if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
      return {
        role: 'assistant',
        content: message.content.length > 0 ? message.content : null,
        tool_calls: message.toolCalls.map((call) => ({ id: wireCallId(call.callId), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
      };
    }
    return { role: message.role, content: message.content };
  });

const toolChoices = { auto: 'auto', any: 'required', none: 'none' } as const;

/**
 * The `prompt_cache_key` of a request: one per session and agent, so OpenAI routes the calls that share a prefix to
 * the same cache. At most 64 characters (a longer one is shortened with a hash); it names no secret.
 */
export const promptCacheKey = (request: Pick<ModelRequest, 'runId' | 'actor'>): string => {
  const key = `rein:${request.runId}:${request.actor ?? 'root'}`;
  return key.length <= 64 ? key : `rein:${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
};

/**
 * The body of a streaming `POST {baseUrl}/chat/completions`. Usage is requested with `stream_options.include_usage`;
 * optional settings are sent only when configured, so minimal OpenAI-compatible servers accept the request. With
 * `cacheKey`, `prompt_cache_key` is sent (OpenAI's own endpoint takes it; the prefix is kept stable either way).
 */
export const openAIRequestBody = (request: ModelRequest, model: string, settings: { cacheKey?: boolean } = {}): Record<string, unknown> => {
  const { options } = request;
  const hasTools = request.tools.length > 0;
  return {
    model,
    messages: openAIMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
    ...(settings.cacheKey ? { prompt_cache_key: promptCacheKey(request) } : {}),
    ...(hasTools ? { tools: request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: wireSchema(tool) } })) } : {}),
    ...(hasTools && options.toolChoice ? { tool_choice: toolChoices[options.toolChoice] } : {}),
    ...(hasTools && options.parallelToolCalls !== undefined ? { parallel_tool_calls: options.parallelToolCalls } : {}),
    ...(options.maxOutputTokens === undefined ? {} : { max_tokens: options.maxOutputTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  };
};
