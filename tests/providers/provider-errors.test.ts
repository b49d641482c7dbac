import { describe, expect, it } from 'vitest';
import { classifyError, errorDetailsOf, errorFromResponse, redact, retryAfterOf } from '../../src/providers/provider-errors.js';
import { displayEndpoint, joinUrl, wireCallId } from '../../src/providers/wire-format.js';

const respond = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  errorFromResponse({ status, headers: new Headers(headers), body, endpoint: 'http://127.0.0.1:1/v1', keyHint: 'OPENAI_API_KEY', secrets: ['sk-secret-1234567890'] });

describe('provider error mapping', () => {
  it('maps statuses onto the taxonomy with the right retryable flag', () => {
    const cases: Array<[number, string, boolean]> = [
      [400, 'bad_request', false],
      [401, 'auth', false],
      [403, 'auth', false],
      [404, 'bad_request', false],
      [408, 'timeout', true],
      [413, 'context_length', false],
      [422, 'bad_request', false],
      [429, 'rate_limit', true],
      [500, 'server_error', true],
      [502, 'server_error', true],
      [503, 'overloaded', true],
      [504, 'timeout', true],
      [529, 'overloaded', true],
    ];
    for (const [status, code, retryable] of cases) expect(respond(status, {}), String(status)).toMatchObject({ code, retryable });
  });

  it('reads context-length errors of OpenAI, Anthropic, vLLM and llama.cpp bodies', () => {
    expect(respond(400, { error: { message: 'x', type: 'invalid_request_error', code: 'context_length_exceeded' } }).code).toBe('context_length');
    expect(respond(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } }).code).toBe('context_length');
    expect(respond(400, { object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", type: 'BadRequestError', code: 400 }).code).toBe('context_length');
    expect(respond(400, { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error' } }).code).toBe('context_length');
    expect(respond(400, { error: 'model "llama3" not found, try pulling it first' }).code).toBe('bad_request');
  });

  it('a 429 without quota honours retry-after; insufficient quota is not retryable', () => {
    expect(respond(429, {}, { 'retry-after': '3' })).toMatchObject({ code: 'rate_limit', retryAfterMs: 3000 });
    expect(respond(429, { error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'quota' } }, { 'retry-after': '3' })).toEqual({ code: 'quota', message: expect.any(String), retryable: false });
  });

  it('parses retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfterOf(new Headers({ 'retry-after-ms': '250.4', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterOf(new Headers({ 'retry-after': '1.5' }))).toBe(1500);
    expect(retryAfterOf(new Headers({ 'retry-after': new Date(20_000).toUTCString() }), 10_000)).toBe(10_000);
    expect(retryAfterOf(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterOf(new Headers({ 'retry-after': '-1' }))).toBeUndefined();
    expect(retryAfterOf(new Headers())).toBeUndefined();
  });

  it('never lets the key into a message', () => {
    const error = respond(401, { error: { message: 'Incorrect API key provided: sk-secret-1234567890.', code: 'invalid_api_key' } });
    expect(error.code).toBe('auth');
    expect(error.message).not.toContain('sk-secret-1234567890');
    expect(redact('a sk-secret-1234567890 b sk-secret-1234567890', ['sk-secret-1234567890'])).toBe('a [redacted] b [redacted]');
    // A URL quoted in a message keeps neither its userinfo nor its query values (trial 5 E40).
    const quoted = redact('Request cannot be constructed from a URL that includes credentials: http://u:sk-PASSSECRET123@127.0.0.1:18101/v1/chat/completions?key=sk-QUERYSECRET123&x=1 (retry)', []);
    expect(quoted).not.toMatch(/SECRET/);
    expect(quoted).toContain('http://[redacted]@127.0.0.1:18101/v1/chat/completions?key=[redacted]&x=[redacted] (retry)');
    expect(redact('the connection to http://127.0.0.1:9/v1 failed', [])).toBe('the connection to http://127.0.0.1:9/v1 failed');
  });

  it('reads error details from every body shape', () => {
    expect(errorDetailsOf({ error: { message: 'm', type: 't', code: 'c' } })).toEqual({ message: 'm', type: 't', code: 'c' });
    expect(errorDetailsOf({ error: 'plain' })).toEqual({ message: 'plain' });
    expect(errorDetailsOf({ detail: [{ msg: 'field required' }] })).toEqual({ message: '[{"msg":"field required"}]' });
    expect(errorDetailsOf('Bad Gateway')).toEqual({ message: 'Bad Gateway' });
    expect(errorDetailsOf(null)).toEqual({});
    expect(classifyError({ type: 'overloaded_error' })).toBe('overloaded');
    expect(classifyError({ type: 'api_error' })).toBe('server_error');
  });
});

describe('wire formats', () => {
  it('keeps credentials, query and fragment out of the displayed endpoint', () => {
    expect(displayEndpoint('https://user:sk-123@example.com/v1/?key=abc#x')).toBe('https://example.com/v1');
    expect(joinUrl('http://127.0.0.1:8080/v1/', '/chat/completions')).toBe('http://127.0.0.1:8080/v1/chat/completions');
    expect(joinUrl('https://api.anthropic.com', 'v1/messages')).toBe('https://api.anthropic.com/v1/messages');
  });

  it('turns core call ids into vendor-safe ids deterministically', () => {
    expect(wireCallId('root:e3.0')).toBe('root_e3_0');
    expect(wireCallId('root/child-2:e14.3')).toBe('root_child-2_e14_3');
    const long = wireCallId(`root/${'x'.repeat(60)}:e1.0`);
    expect(long).toHaveLength(40);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(wireCallId(`root/${'x'.repeat(60)}:e1.0`)).toBe(long);
    expect(wireCallId(`root/${'x'.repeat(60)}:e1.1`)).not.toBe(long);
  });
});
