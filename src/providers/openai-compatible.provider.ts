import type { ModelEvent } from '../../models/model-contract.js';
import type { StopReason, TokenUsage } from '../../models/model.records.js';
import { openAIRequestBody } from './openai-request.js';
import { errorFromStreamEvent, providerError } from './provider-errors.js';
import type { ModelProvider } from './provider.js';
import type { SseEvent } from './sse-parser.js';
import type { StreamNormalizer } from './sse-transport.js';
import { isToolIntent, ToolCallAssembler } from './tool-call-assembler.js';
import { tokenCount } from './wire-format.js';
import { createSseProvider, type SseProviderOptions, type SseVendor } from './sse-provider.js';

/** The OpenAI API; any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter…) via `baseUrl`. */
export const defaultOpenAIBaseUrl = 'https://api.openai.com/v1';

/** Options of `createOpenAICompatibleProvider`. */
export interface OpenAICompatibleOptions extends SseProviderOptions {
  /** Includes the version path, e.g. `http://127.0.0.1:11434/v1` (default `https://api.openai.com/v1`). */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer …` when present; local servers usually need none. */
  apiKey?: string;
  /** Extra request headers (e.g. OpenRouter's `HTTP-Referer`). */
  headers?: Record<string, string>;
  /** Where the key comes from, named in auth errors (default `OPENAI_API_KEY`). */
  keyHint?: string;
  /** The provider name recorded in `session.created` (default `openai`). */
  name?: string;
}

const stopReasons: Record<string, StopReason> = { stop: 'end_turn', tool_calls: 'tool_use', function_call: 'tool_use', length: 'max_tokens' };

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

interface Chunk {
  id?: string;
  model?: string;
  error?: unknown;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null;
  choices?: Array<{ index?: number; delta?: { content?: unknown; refusal?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: ChunkToolCall[] }; finish_reason?: string | null }>;
}

/**
 * Chat-completions stream → model events. `started` comes with the first chunk; text, reasoning
 * (`reasoning_content` / `reasoning`, as DeepSeek, vLLM, Ollama and OpenRouter stream it) and tool-call deltas as
 * they arrive; at the finish reason every tool call is complete and proposed in index order; `usage` (from the
 * `include_usage` chunk) and `finished` close the stream at `[DONE]` (or at the end of a body that had a finish
 * reason). A body that ends before any finish reason is a retryable `network` error and proposes nothing.
 */
export class OpenAIStreamNormalizer implements StreamNormalizer {
  closed = false;
  private started = false;
  private stopReason: StopReason | undefined;
  /** The finish reason as the server sent it, kept when no core reason maps it. */
  private rawStopReason: string | undefined;
  private usage: TokenUsage | undefined;
  private readonly calls = new ToolCallAssembler();
  private proposed = 0;

  constructor(private readonly context: { endpoint: string; requestId: string | undefined; secrets: readonly string[] }) {}

  accept(event: SseEvent, out: ModelEvent[]): void {
    if (event.data === '[DONE]') return this.finish(out);
    let chunk: Chunk;
    try {
      chunk = JSON.parse(event.data) as Chunk;
    } catch {
      return this.fail(out, providerError('server_error', `${this.context.endpoint} sent an event that is not JSON: ${event.data.slice(0, 80)}`));
    }
    if (chunk.error !== undefined || event.event === 'error') return this.fail(out, errorFromStreamEvent(chunk, this.context.endpoint, this.context.secrets));
    if (!this.started) {
      this.started = true;
      const requestId = this.context.requestId ?? chunk.id;
      out.push({ type: 'started', ...(chunk.model ? { model: chunk.model } : {}), ...(requestId ? { requestId } : {}) });
    }
    if (chunk.usage) {
      const input = chunk.usage.prompt_tokens === undefined ? 0 : tokenCount(chunk.usage.prompt_tokens);
      const output = chunk.usage.completion_tokens === undefined ? 0 : tokenCount(chunk.usage.completion_tokens);
      // A count that is not a whole number (`"5000"`, `1e-9`) makes the whole usage unknown: rein's estimate is charged.
      // Cached prompt tokens are part of `prompt_tokens`; a count that is not a whole number is left out.
      const cached = tokenCount(chunk.usage.prompt_tokens_details?.cached_tokens);
      this.usage = input === undefined || output === undefined ? undefined : { inputTokens: input, outputTokens: output, ...(cached !== undefined && cached > 0 && cached <= input ? { cacheReadTokens: cached } : {}) };
    }
    const choice = chunk.choices?.find((entry) => (entry.index ?? 0) === 0);
    if (!choice) return;
    const delta = choice.delta ?? {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning.length > 0) out.push({ type: 'reasoning-delta', text: reasoning });
    if (typeof delta.content === 'string' && delta.content.length > 0) out.push({ type: 'text-delta', text: delta.content });
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) out.push({ type: 'text-delta', text: delta.refusal });
    if (delta.tool_calls) {
      for (const [position, call] of delta.tool_calls.entries()) {
        const rawArguments = call.function?.arguments;
        const argumentsDelta = typeof rawArguments === 'string' ? rawArguments : rawArguments === undefined || rawArguments === null ? '' : JSON.stringify(rawArguments);
        out.push(this.calls.delta(call.index ?? position, { providerCallId: call.id, name: call.function?.name, argumentsDelta }));
      }
    }
    if (choice.finish_reason) this.finishReason(choice.finish_reason, out);
  }

  end(out: ModelEvent[]): void {
    if (this.closed) return;
    if (this.stopReason !== undefined) return this.finish(out);
    this.fail(out, providerError('network', `the stream from ${this.context.endpoint} ended before the model finished${this.calls.open > 0 ? ' (a tool call was incomplete)' : ''}`));
  }

  private finishReason(reason: string, out: ModelEvent[]): void {
    if (reason === 'content_filter') return this.fail(out, providerError('content_filter', `${this.context.endpoint} stopped the reply with its content filter`));
    for (const result of this.calls.completeAll()) {
      if (!isToolIntent(result)) return this.fail(out, result);
      out.push(result);
      this.proposed++;
    }
    this.stopReason = this.proposed > 0 ? 'tool_use' : (stopReasons[reason] ?? 'unknown');
    if (this.stopReason === 'unknown') this.rawStopReason = reason.slice(0, 200);
  }

  private finish(out: ModelEvent[]): void {
    if (this.stopReason === undefined) return this.fail(out, providerError('network', `the stream from ${this.context.endpoint} ended without a finish reason`));
    if (this.usage) out.push({ type: 'usage', usage: this.usage });
    out.push({ type: 'finished', stopReason: this.stopReason, ...(this.rawStopReason === undefined ? {} : { rawStopReason: this.rawStopReason }) });
    this.closed = true;
  }

  private fail(out: ModelEvent[], error: ReturnType<typeof providerError>): void {
    out.push({ type: 'error', error });
    this.closed = true;
  }
}

/** An OpenAI-compatible chat-completions API as an SSE vendor: a bearer key, `/chat/completions` under the base URL. */
const openAIVendor: SseVendor = {
  name: 'openai',
  baseUrl: defaultOpenAIBaseUrl,
  path: 'chat/completions',
  keyHint: 'OPENAI_API_KEY',
  requestIdHeader: 'x-request-id',
  headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  body: openAIRequestBody,
  normalizer: (context) => new OpenAIStreamNormalizer(context),
};

/**
 * A provider for any OpenAI-compatible chat-completions endpoint, over Node's `fetch` and rein's own SSE parser (no
 * vendor SDK). Stateless between calls; the API key lives only in this closure and never in a record or message.
 */
export const createOpenAICompatibleProvider = (options: OpenAICompatibleOptions): ModelProvider => createSseProvider(openAIVendor, options);
