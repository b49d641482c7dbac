import type { ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from './provider.js';
import { streamSse, type StreamNormalizer } from './sse-transport.js';
import { displayEndpoint, joinUrl } from './wire-format.js';

/** What a user gives an HTTP + SSE provider; each vendor's options say what its base URL and key header are. */
export interface SseProviderOptions {
  model: string;
  /** Where the vendor's API is (default: the vendor's own). */
  baseUrl?: string;
  /** The API key, sent in the vendor's key header; never in a record or message. */
  apiKey?: string;
  /** Extra request headers, sent after the vendor's own (they may replace them). */
  headers?: Record<string, string>;
  /** Report `timeout` when no byte arrives for this long (default 300,000 ms). */
  idleTimeoutMs?: number;
  /** Where the key comes from, named in auth errors (default: the vendor's usual variable). */
  keyHint?: string;
  /** The provider name recorded in `session.created` (default: the vendor's). */
  name?: string;
  /**
   * Prompt caching (default on): Anthropic requests mark their stable parts with `cache_control`; OpenAI requests send
   * `prompt_cache_key` when `promptCacheKey` allows it. Off: neither is sent (the prefix is still kept stable).
   */
  promptCache?: boolean;
  /** Send OpenAI's `prompt_cache_key` (default: only to api.openai.com; other compatible servers may refuse the field). */
  promptCacheKey?: boolean;
  fetch?: typeof fetch;
}

/** How one vendor's streaming API is reached and read. */
export interface SseVendor {
  /** The provider name recorded when the options give none. */
  name: string;
  baseUrl: string;
  /** Appended to the base URL. */
  path: string;
  /** Where the key comes from, named in auth errors, when the options name no other place. */
  keyHint: string;
  /** The response header carrying the vendor's request id. */
  requestIdHeader: string;
  /** The vendor's own headers and the one carrying the key; the user's `headers` come after them. */
  headers(apiKey: string | undefined): Record<string, string>;
  body(request: ModelRequest, model: string, settings: { cache: boolean; cacheKey: boolean }): unknown;
  normalizer(context: { endpoint: string; requestId: string | undefined; secrets: readonly string[] }): StreamNormalizer;
}

const isOpenAIHost = (baseUrl: string): boolean => {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
};

/**
 * A provider for one vendor's streaming HTTP API, over Node's `fetch` and rein's own SSE parser (no vendor SDK).
 * Stateless between calls; the API key lives only in this closure and never in a record or message; the endpoint is
 * recorded without credentials. No byte for `idleTimeoutMs` (default 300,000 ms) is a `timeout`.
 */
export const createSseProvider = (vendor: SseVendor, options: SseProviderOptions): ModelProvider => {
  const baseUrl = options.baseUrl ?? vendor.baseUrl;
  const url = joinUrl(baseUrl, vendor.path);
  const endpoint = displayEndpoint(baseUrl);
  const secrets = options.apiKey ? [options.apiKey] : [];
  const cache = options.promptCache !== false;
  const cacheKey = cache && (options.promptCacheKey ?? isOpenAIHost(baseUrl));
  return {
    name: options.name ?? vendor.name,
    model: options.model,
    source: endpoint,
    stream: (request: ModelRequest) =>
      streamSse({
        url,
        headers: { ...vendor.headers(options.apiKey), ...options.headers },
        body: vendor.body(request, request.model ?? options.model, { cache, cacheKey }),
        signal: request.signal,
        idleTimeoutMs: options.idleTimeoutMs ?? 300_000,
        endpoint,
        keyHint: options.keyHint ?? vendor.keyHint,
        secrets,
        requestIdHeader: vendor.requestIdHeader,
        fetch: options.fetch ?? fetch,
        normalizer: ({ requestId }) => vendor.normalizer({ endpoint, requestId, secrets }),
      }),
  };
};
