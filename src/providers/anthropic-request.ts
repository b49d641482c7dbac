import type { ModelMessage, ModelRequest } from '../../models/model-contract.js';
import { wireCallId, wireSchema } from './wire-format.js';

type Block = Record<string, unknown>;
interface WireMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

const blocksOf = (message: Exclude<ModelMessage, { role: 'system' }>): Block[] => {
  if (message.role === 'tool') {
    return [{ type: 'tool_result', tool_use_id: wireCallId(message.callId), ...(message.content.length > 0 ? { content: message.content } : {}), ...(message.isError ? { is_error: true } : {}) }];
  }
  const blocks: Block[] = message.content.length > 0 ? [{ type: 'text', text: message.content }] : [];
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: wireCallId(call.callId), name: call.name, input: call.arguments });
  }
  return blocks;
};

/**
 * Core messages as Messages-API messages: system text goes to `system`; tool results become `tool_result` blocks of
 * a user message; consecutive messages of one role are merged (all results of a turn travel together, as the API
 * requires); empty text blocks, which the API rejects, are left out. `ends[i]` is where core message `i` ended in
 * the wire messages (its last block, or the system text), for cache breakpoints.
 */
export const anthropicMessages = (messages: readonly ModelMessage[]): { system: string; messages: WireMessage[]; ends: Array<WireEnd | undefined> } => {
  const system: string[] = [];
  const wire: WireMessage[] = [];
  const ends: Array<WireEnd | undefined> = [];
  for (const message of messages) {
    if (message.role === 'system') {
      system.push(message.content);
      ends.push('system');
      continue;
    }
    const blocks = blocksOf(message);
    if (blocks.length === 0) {
      ends.push(ends[ends.length - 1]);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = wire[wire.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else wire.push({ role, content: blocks });
    ends.push(blocks[blocks.length - 1]!);
  }
  // A final assistant message is a prefill (a `pause_turn` continuation); the API refuses trailing whitespace there.
  const last = wire[wire.length - 1];
  const tail = last?.role === 'assistant' ? last.content[last.content.length - 1] : undefined;
  if (tail?.type === 'text' && typeof tail.text === 'string') tail.text = tail.text.trimEnd();
  return { system: system.join('\n\n'), messages: wire, ends };
};

/** Where a core message ended on the wire: the system text, or the last content block it became. */
type WireEnd = 'system' | Block;

/** Anthropic allows four breakpoints per request; rein uses at most three (system, session context, history). */
const maxBreakpoints = 4;

/** Messages requires `max_tokens`; rein sends this unless `maxOutputTokens` is configured. */
export const defaultAnthropicMaxTokens = 8192;

const toolChoices = { auto: 'auto', any: 'any', none: 'none' } as const;

/**
 * The body of a streaming `POST {baseUrl}/v1/messages`. With `cache` (the default), the request's cache breakpoints
 * become `cache_control: { type: "ephemeral" }` markers on the system text and on the last block of each stable part,
 * so the API caches tools, system and history up to them and later calls read that prefix from its cache.
 */
export const anthropicRequestBody = (request: ModelRequest, model: string, settings: { cache?: boolean } = {}): Record<string, unknown> => {
  const { options } = request;
  const { system, messages, ends } = anthropicMessages(request.messages);
  const hasTools = request.tools.length > 0;
  const choice = options.toolChoice ?? (options.parallelToolCalls === false ? 'auto' : undefined);
  const marked = settings.cache === false ? [] : [...new Set((request.cacheBreakpoints ?? []).map((index) => ends[index]).filter((end): end is WireEnd => end !== undefined))].slice(-maxBreakpoints);
  const ephemeral = { type: 'ephemeral' };
  for (const end of marked) if (end !== 'system') end.cache_control = ephemeral;
  const systemField = system.length === 0 ? {} : marked.includes('system') ? { system: [{ type: 'text', text: system, cache_control: ephemeral }] } : { system };
  return {
    model,
    max_tokens: options.maxOutputTokens ?? defaultAnthropicMaxTokens,
    stream: true,
    ...systemField,
    messages,
    ...(hasTools ? { tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: wireSchema(tool) })) } : {}),
    ...(hasTools && choice ? { tool_choice: { type: toolChoices[choice], ...(options.parallelToolCalls === false && choice !== 'none' ? { disable_parallel_tool_use: true } : {}) } } : {}),
    ...(options.temperature === undefined ? {} : { temperature: Math.min(options.temperature, 1) }),
  };
};
