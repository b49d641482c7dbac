import type { ProviderErrorCode, ProviderErrorInfo } from '../../models/model.records.js';

const retryableCodes: ReadonlySet<ProviderErrorCode> = new Set(['rate_limit', 'overloaded', 'server_error', 'network', 'timeout', 'malformed_tool_call']);

/** Build a provider error; `retryable` follows the taxonomy (rate limit, overloaded, server, network, timeout, malformed tool call). */
export const providerError = (code: ProviderErrorCode, message: string, retryAfterMs?: number): ProviderErrorInfo => ({
  code,
  message,
  retryable: retryableCodes.has(code),
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

/**
 * How long the server asked us to wait, in milliseconds: `retry-after-ms` (OpenAI) first, then `retry-after` as
 * seconds or an HTTP date. Absent, negative or unparseable values are undefined.
 */
export const retryAfterOf = (headers: Headers, now: number = Date.now()): number | undefined => {
  const milliseconds = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};

const contextLengthPattern =
  /context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens|input is too long|reduce the length|exceeds? (the )?(model'?s? )?(maximum|max) (context|input)|request_too_large/i;

/** True when an error message or code says the request does not fit the model's context window. */
export const mentionsContextLength = (...texts: Array<string | undefined>): boolean => texts.some((text) => text !== undefined && contextLengthPattern.test(text));

/** The parts of a vendor error body rein reads, whatever its shape (OpenAI, Anthropic, Ollama, vLLM, plain text). */
export interface ErrorDetails {
  message?: string;
  type?: string;
  code?: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : typeof value === 'number' ? String(value) : undefined);

/** Pull `message`, `type` and `code` out of a parsed error body: `{ error: { … } }`, `{ error: "…" }`, `{ detail }`, `{ message }`. */
export const errorDetailsOf = (body: unknown): ErrorDetails => {
  if (typeof body === 'string') return body.trim() ? { message: body.trim().slice(0, 500) } : {};
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const inner = record.error;
  if (typeof inner === 'string') return { message: inner, ...(text(record.type) && record.type !== 'error' ? { type: text(record.type) } : {}) };
  if (typeof inner === 'object' && inner !== null) {
    const error = inner as Record<string, unknown>;
    return { ...(text(error.message) ? { message: text(error.message) } : {}), ...(text(error.type) ? { type: text(error.type) } : {}), ...(text(error.code) ? { code: text(error.code) } : {}) };
  }
  const message = text(record.message) ?? (typeof record.detail === 'string' ? record.detail : record.detail === undefined ? undefined : JSON.stringify(record.detail));
  return { ...(message ? { message } : {}), ...(text(record.type) ? { type: text(record.type) } : {}), ...(text(record.code) ? { code: text(record.code) } : {}) };
};

const codeByVendorType: Record<string, ProviderErrorCode> = {
  context_length_exceeded: 'context_length',
  request_too_large: 'context_length',
  exceed_context_size_error: 'context_length',
  insufficient_quota: 'quota',
  billing_error: 'quota',
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate_limit',
  rate_limit_exceeded: 'rate_limit',
  authentication_error: 'auth',
  permission_error: 'auth',
  invalid_api_key: 'auth',
  api_error: 'server_error',
  server_error: 'server_error',
  timeout_error: 'timeout',
  content_filter: 'content_filter',
  invalid_request_error: 'bad_request',
  not_found_error: 'bad_request',
};

const codeByStatus = (status: number): ProviderErrorCode => {
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 413) return 'context_length';
  if (status === 429) return 'rate_limit';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 409 || status >= 500) return 'server_error';
  if (status >= 400) return 'bad_request';
  return 'unknown';
};

/**
 * Classify a vendor error into the taxonomy. Context length wins (it decides compaction), then quota (a 429 that
 * waiting will not fix), then the HTTP status, then the vendor's error type or code.
 */
export const classifyError = (details: ErrorDetails, status?: number): ProviderErrorCode => {
  const byType = codeByVendorType[details.code ?? ''] ?? codeByVendorType[details.type ?? ''];
  if (byType === 'context_length' || ((status === undefined || status < 500) && mentionsContextLength(details.message, details.code))) return 'context_length';
  if (byType === 'quota') return 'quota';
  if (status !== undefined && status >= 400) return codeByStatus(status);
  return byType ?? 'server_error';
};

/**
 * Replace every occurrence of each secret (API keys) with `[redacted]`, and in every URL of the message the userinfo
 * (`https://user:key@host`) and the query's values (`?key=…`): a message that quotes the request URL carries neither.
 */
export const redact = (message: string, secrets: readonly string[]): string =>
  secrets
    .reduce((current, secret) => (secret.length >= 4 ? current.split(secret).join('[redacted]') : current), message)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]*@/gi, '$1[redacted]@')
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#"'<>]*\?)([^\s#"'<>]*)/gi, (_whole, before: string, query: string) => `${before}${query.replace(/=([^&]*)/g, '=[redacted]')}`);

const labels: Partial<Record<ProviderErrorCode, string>> = {
  auth: 'the endpoint refused the credentials',
  quota: 'the account has no quota left',
  rate_limit: 'rate limited',
  overloaded: 'the endpoint is overloaded',
  context_length: 'the request does not fit the model context window',
  bad_request: 'the endpoint rejected the request',
  timeout: 'the endpoint timed out',
  server_error: 'the endpoint failed',
  content_filter: 'the endpoint filtered the content',
};

export interface HttpErrorContext {
  status: number;
  headers: Headers;
  body: unknown;
  /** The endpoint, already stripped of credentials. */
  endpoint: string;
  /** Where the user configures the key (`OPENAI_API_KEY`), named in auth errors. */
  keyHint?: string;
  secrets: readonly string[];
}

/** Map a non-2xx response to a provider error with a clear, secret-free message. */
export const errorFromResponse = (context: HttpErrorContext): ProviderErrorInfo => {
  const details = errorDetailsOf(context.body);
  const code = classifyError(details, context.status);
  const vendor = [details.type, details.code].filter((part, index, all) => part && all.indexOf(part) === index).join('/');
  let message = `${labels[code] ?? 'the request failed'} (HTTP ${context.status}${vendor ? ` ${vendor}` : ''} from ${context.endpoint})`;
  if (details.message) message += `: ${details.message}`;
  if (code === 'auth' && context.keyHint) message += ` — check ${context.keyHint}`;
  if (code === 'bad_request' && context.status === 404) message += ' — check the model name and the base URL';
  const retryAfterMs = code === 'quota' ? undefined : retryAfterOf(context.headers);
  return providerError(code, redact(message, context.secrets), retryAfterMs);
};

/** Map an error event inside a 200 stream (`{ error: … }`, Anthropic's `event: error`) to a provider error. */
export const errorFromStreamEvent = (body: unknown, endpoint: string, secrets: readonly string[]): ProviderErrorInfo => {
  const details = errorDetailsOf(body);
  const code = classifyError(details);
  const vendor = details.type ?? details.code;
  return providerError(code, redact(`${labels[code] ?? 'the stream failed'} (error event${vendor ? ` ${vendor}` : ''} from ${endpoint})${details.message ? `: ${details.message}` : ''}`, secrets));
};
