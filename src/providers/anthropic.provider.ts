import type { ModelEvent } from '../../models/model-contract.js';
import type { ProviderErrorInfo, StopReason } from '../../models/model.records.js';
import { anthropicRequestBody } from './anthropic-request.js';
import { errorFromStreamEvent, providerError } from './provider-errors.js';
import type { ModelProvider } from './provider.js';
import type { SseEvent } from './sse-parser.js';
import type { StreamNormalizer } from './sse-transport.js';
import { isToolIntent, ToolCallAssembler } from './tool-call-assembler.js';
import { tokenCount } from './wire-format.js';
import { createSseProvider, type SseProviderOptions, type SseVendor } from './sse-provider.js';

/** The Anthropic API; the base URL has no version path (`/v1/messages` is appended). */
export const defaultAnthropicBaseUrl = 'https://api.anthropic.com';

/** Options of `createAnthropicProvider`. */
export interface AnthropicOptions extends SseProviderOptions {
  /** Without the version path, e.g. `https://api.anthropic.com`. */
  baseUrl?: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Extra request headers (e.g. `anthropic-beta`). */
  headers?: Record<string, string>;
  /** Where the key comes from, named in auth errors (default `ANTHROPIC_API_KEY`). */
  keyHint?: string;
}

const stopReasons: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  pause_turn: 'pause_turn',
};

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: Usage };
  content_block?: { type?: string; id?: string; name?: string; input?: Record<string, unknown>; text?: string; thinking?: string };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: Usage;
  error?: unknown;
}

const inputTokensOf = (usage: Usage): number => (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);

/**
 * Messages stream → model events: `message_start` → `started`; text and thinking deltas stream as they come;
 * a `tool_use` block streams its `input_json_delta`s and is proposed at its `content_block_stop`; `message_delta`
 * carries the stop reason (`pause_turn` included; `refusal` is a `content_filter` error) and the output tokens;
 * `message_stop` emits `usage` and `finished`. An `error` event, or a body that ends before `message_stop`, is
 * an error event, and nothing incomplete is proposed. Unknown event and block types are ignored, as the API's
 * versioning policy asks.
 */
export class AnthropicStreamNormalizer implements StreamNormalizer {
  closed = false;
  private inputTokens = 0;
  private outputTokens = 0;
  private cacheReadTokens = 0;
  private cacheWriteTokens = 0;
  private stopReason: StopReason | undefined;
  /** The stop reason as the server sent it, kept when no core reason maps it. */
  private rawStopReason: string | undefined;
  private readonly calls = new ToolCallAssembler();

  constructor(private readonly context: { endpoint: string; requestId: string | undefined; secrets: readonly string[] }) {}

  accept(event: SseEvent, out: ModelEvent[]): void {
    if (event.event === 'ping') return;
    let data: StreamEvent;
    try {
      data = JSON.parse(event.data) as StreamEvent;
    } catch {
      return this.fail(out, providerError('server_error', `${this.context.endpoint} sent an event that is not JSON: ${event.data.slice(0, 80)}`));
    }
    switch (data.type ?? event.event) {
      case 'message_start': {
        const message = data.message ?? {};
        const requestId = this.context.requestId ?? message.id;
        if (message.usage) this.noteUsage(message.usage);
        out.push({ type: 'started', ...(message.model ? { model: message.model } : {}), ...(requestId ? { requestId } : {}) });
        return;
      }
      case 'content_block_start':
        return this.blockStart(data, out);
      case 'content_block_delta':
        return this.blockDelta(data, out);
      case 'content_block_stop': {
        if (data.index === undefined || !this.calls.has(data.index)) return;
        const result = this.calls.complete(data.index);
        if (!isToolIntent(result)) return this.fail(out, result);
        out.push(result);
        return;
      }
      case 'message_delta': {
        if (data.usage) this.noteUsage(data.usage);
        const reason = data.delta?.stop_reason;
        if (reason === 'refusal') return this.fail(out, providerError('content_filter', `the model declined to continue (stop reason refusal from ${this.context.endpoint})`));
        // The context window filled up, not the output budget: continuing would only resend a longer context. It is the
        // context-length failure (compact once and retry, or fail `context_length`).
        if (reason === 'model_context_window_exceeded') return this.fail(out, providerError('context_length', `the model's context window filled up before it finished its reply (stop reason model_context_window_exceeded from ${this.context.endpoint})`));
        if (reason) this.stopReason = stopReasons[reason] ?? 'unknown';
        if (reason && this.stopReason === 'unknown') this.rawStopReason = reason.slice(0, 200);
        return;
      }
      case 'message_stop': {
        if (this.calls.open > 0) return this.fail(out, providerError('malformed_tool_call', `the message from ${this.context.endpoint} stopped inside a tool_use block`));
        out.push({ type: 'usage', usage: { inputTokens: this.inputTokens, outputTokens: this.outputTokens, ...(this.cacheReadTokens > 0 ? { cacheReadTokens: this.cacheReadTokens } : {}), ...(this.cacheWriteTokens > 0 ? { cacheWriteTokens: this.cacheWriteTokens } : {}) } });
        out.push({ type: 'finished', stopReason: this.stopReason ?? 'end_turn', ...(this.rawStopReason === undefined ? {} : { rawStopReason: this.rawStopReason }) });
        this.closed = true;
        return;
      }
      case 'error':
        return this.fail(out, errorFromStreamEvent(data, this.context.endpoint, this.context.secrets));
      default:
        return;
    }
  }

  end(out: ModelEvent[]): void {
    if (this.closed) return;
    this.fail(out, providerError('network', `the stream from ${this.context.endpoint} ended before message_stop${this.calls.open > 0 ? ' (a tool call was incomplete)' : ''}`));
  }

  private blockStart(data: StreamEvent, out: ModelEvent[]): void {
    const block = data.content_block ?? {};
    if (block.type === 'text' && block.text) out.push({ type: 'text-delta', text: block.text });
    else if (block.type === 'thinking' && block.thinking) out.push({ type: 'reasoning-delta', text: block.thinking });
    else if (block.type === 'tool_use' && data.index !== undefined) {
      out.push(this.calls.delta(data.index, { providerCallId: block.id, name: block.name, argumentsDelta: '', ...(block.input ? { initial: block.input } : {}) }));
    }
  }

  private blockDelta(data: StreamEvent, out: ModelEvent[]): void {
    const delta = data.delta ?? {};
    if (delta.type === 'text_delta' && delta.text) out.push({ type: 'text-delta', text: delta.text });
    else if (delta.type === 'thinking_delta' && delta.thinking) out.push({ type: 'reasoning-delta', text: delta.thinking });
    else if (delta.type === 'input_json_delta' && data.index !== undefined && this.calls.has(data.index)) {
      out.push(this.calls.delta(data.index, { argumentsDelta: delta.partial_json ?? '' }));
    }
  }

  private noteUsage(usage: Usage): void {
    // A count that is not a whole number is not taken: a part of the input left at 0 is estimated by rein.
    const counted = { input_tokens: tokenCount(usage.input_tokens), output_tokens: tokenCount(usage.output_tokens), cache_creation_input_tokens: tokenCount(usage.cache_creation_input_tokens ?? undefined), cache_read_input_tokens: tokenCount(usage.cache_read_input_tokens ?? undefined) };
    if (counted.input_tokens !== undefined) this.inputTokens = Math.max(this.inputTokens, inputTokensOf(counted));
    // Cache reads and writes are part of the input: each is kept apart too (prices differ, and the hit rate is shown).
    if (counted.cache_read_input_tokens !== undefined) this.cacheReadTokens = Math.max(this.cacheReadTokens, counted.cache_read_input_tokens);
    if (counted.cache_creation_input_tokens !== undefined) this.cacheWriteTokens = Math.max(this.cacheWriteTokens, counted.cache_creation_input_tokens);
    if (counted.output_tokens !== undefined) this.outputTokens = Math.max(this.outputTokens, counted.output_tokens);
  }

  private fail(out: ModelEvent[], error: ProviderErrorInfo): void {
    out.push({ type: 'error', error });
    this.closed = true;
  }
}

/** The Anthropic Messages API as an SSE vendor: `x-api-key` and `anthropic-version` headers, `/v1/messages`. */
const anthropicVendor: SseVendor = {
  name: 'anthropic',
  baseUrl: defaultAnthropicBaseUrl,
  path: 'v1/messages',
  keyHint: 'ANTHROPIC_API_KEY',
  requestIdHeader: 'request-id',
  headers: (apiKey) => ({ 'anthropic-version': '2023-06-01', ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
  body: anthropicRequestBody,
  normalizer: (context) => new AnthropicStreamNormalizer(context),
};

/**
 * A provider for the Anthropic Messages API (and compatible endpoints), over Node's `fetch` and rein's own SSE
 * parser (no vendor SDK). Stateless between calls; the API key lives only in this closure.
 */
export const createAnthropicProvider = (options: AnthropicOptions): ModelProvider => createSseProvider(anthropicVendor, options);
