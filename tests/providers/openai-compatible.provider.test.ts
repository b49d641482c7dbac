import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { jsonError, startLoopbackServer, streamOf, transcript, type Exchange, type LoopbackServer } from '../support/loopback-server.js';
import { collect, runProviderSession, sampleRequest } from '../support/provider-session.js';

const model = 'gpt-4.1-mini-2025-04-14';
const apiKey = 'sk-test-0123456789abcdefghij';
const finalText = transcript('openai/text.sse');

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server that answers the first requests with `first`, then with a plain text reply that ends the session. */
const serve = async (...first: Exchange[]) => {
  server = await startLoopbackServer((_request, index) => first[index] ?? streamOf(finalText));
  return createOpenAICompatibleProvider({ model: 'gpt-4.1-mini', baseUrl: `${server.url}/v1`, apiKey });
};

const started = { type: 'started', model, requestId: expect.stringMatching(/^chatcmpl-/) };

describe('OpenAI-compatible adapter over a loopback server', () => {
  it('streams plain text, then usage and the finish', async () => {
    const provider = await serve(streamOf(finalText));
    expect(await collect(provider, sampleRequest())).toEqual([
      started,
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: '! How can' },
      { type: 'text-delta', text: ' I help?' },
      { type: 'usage', usage: { inputTokens: 19, outputTokens: 7 } },
      { type: 'finished', stopReason: 'end_turn' },
    ]);
    const [request] = server!.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${apiKey}` } });
    expect(request!.body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Read notes.txt' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'read', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }],
    });
  });

  it('takes no usage whose counts are not whole numbers (trial 7 G8): the session charges its own estimate', async () => {
    for (const [prompt, completion] of [['"5000"', '10'], ['1e-9', '1'], ['-3', '2'], ['19', '7.5']]) {
      const odd = finalText.replace('"prompt_tokens":19,"completion_tokens":7', `"prompt_tokens":${prompt},"completion_tokens":${completion}`);
      expect(odd, 'the fixture holds the usage this test rewrites').not.toBe(finalText);
      const provider = await serve(streamOf(odd));
      const events = await collect(provider, sampleRequest());
      expect(events.filter((event) => (event as { type: string }).type === 'usage'), `${prompt}/${completion}`).toEqual([]);
      expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'end_turn' });
      await server!.close();
      server = undefined;
    }
  });

  it('a finish reason no adapter knows is recorded as unknown with its raw value, never as end_turn (issue 30 E)', async () => {
    const odd = finalText.replace('"finish_reason":"stop"', '"finish_reason":"eos_token"');
    expect(odd).not.toBe(finalText);
    const provider = await serve(streamOf(odd), streamOf(odd));
    const events = await collect(provider, sampleRequest());
    expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'unknown', rawStopReason: 'eos_token' });
    const session = await runProviderSession(provider);
    expect(session.of('model.responded')[0]).toMatchObject({ stopReason: 'unknown', rawStopReason: 'eos_token' });
  });

  it('takes the request id from x-request-id when the server sends one', async () => {
    const provider = await serve(streamOf(finalText, { headers: { 'x-request-id': 'req_abc123' } }));
    expect((await collect(provider, sampleRequest()))[0]).toEqual({ type: 'started', model, requestId: 'req_abc123' });
  });

  it('assembles one tool call and proposes it only at the finish reason; the session runs it and completes', async () => {
    const provider = await serve(streamOf(transcript('openai/tool-call.sse')));
    const events = await collect(provider, sampleRequest());
    const delta = (argumentsDelta: string) => ({ type: 'tool-intent-delta', index: 0, providerCallId: 'call_8sKq2VxN1pLr4TzY6mWb0Hc', name: 'read', argumentsDelta });
    expect(events).toEqual([
      started,
      delta(''),
      delta('{"'),
      delta('path'),
      delta('":"'),
      delta('notes'),
      delta('.txt'),
      delta('"}'),
      { type: 'tool-intent', providerCallId: 'call_8sKq2VxN1pLr4TzY6mWb0Hc', name: 'read', arguments: { path: 'notes.txt' } },
      { type: 'usage', usage: { inputTokens: 312, outputTokens: 18 } },
      { type: 'finished', stopReason: 'tool_use' },
    ]);

    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/tool-call.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.responded')[0].toolCalls).toEqual([{ callId: 'root:e1.0', name: 'read', arguments: { path: 'notes.txt' }, providerCallId: 'call_8sKq2VxN1pLr4TzY6mWb0Hc' }]);
    expect(session.of('tool.settled')[0]).toMatchObject({ status: 'ok', callId: 'root:e1.0' });
    const followUp = server!.requests[1]!.body.messages;
    expect(followUp.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'root_e1_0', type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } }] },
      { role: 'tool', tool_call_id: 'root_e1_0', content: expect.stringContaining('remember the milk') },
      // The round's state, which changes every round, comes last: everything before it is a stable prefix.
      { role: 'user', content: expect.stringMatching(/^<turn-context [\s\S]*model turns so far: 1/) },
    ]);
    expect(server!.requests[1]!.body.prompt_cache_key).toBeUndefined();
  });

  it('assembles interleaved parallel tool calls independently, by index', async () => {
    const provider = await serve(streamOf(transcript('openai/parallel-tool-calls.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.filter((event) => event.type !== 'tool-intent-delta')).toEqual([
      started,
      { type: 'text-delta', text: 'Reading both.' },
      { type: 'tool-intent', providerCallId: 'call_Aq1', name: 'read', arguments: { path: 'notes.txt' } },
      { type: 'tool-intent', providerCallId: 'call_Bz2', name: 'list_dir', arguments: { path: '.' } },
      { type: 'usage', usage: { inputTokens: 320, outputTokens: 41 } },
      { type: 'finished', stopReason: 'tool_use' },
    ]);
    expect(events.filter((event) => event.type === 'tool-intent-delta').map((event) => [event.index, event.argumentsDelta])).toEqual([
      [0, ''],
      [1, ''],
      [0, '{"pa'],
      [1, '{"path"'],
      [0, 'th": "notes.txt"}'],
      [1, ': "."}'],
    ]);

    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/parallel-tool-calls.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('tool.settled').map((settled) => [settled.callId, settled.name, settled.status])).toEqual([
      ['root:e1.0', 'read', 'ok'],
      ['root:e1.1', 'list_dir', 'ok'],
    ]);
  });

  it('parallel calls sent at the same index, each with its own id and whole arguments, are two calls, not one malformed (trial 6 F26)', async () => {
    const provider = await serve(streamOf(transcript('openai/same-index-tool-calls.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.filter((event) => event.type === 'tool-intent')).toEqual([
      { type: 'tool-intent', providerCallId: 'call_a', name: 'read', arguments: { path: 'notes.txt' } },
      { type: 'tool-intent', providerCallId: 'call_b', name: 'list_dir', arguments: { path: '.' } },
    ]);
    // The second call's deltas stream under an index of their own.
    expect(events.filter((event) => event.type === 'tool-intent-delta').map((event) => [event.index, event.providerCallId])).toEqual([[0, 'call_a'], [1, 'call_b']]);
    expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'tool_use' });

    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/same-index-tool-calls.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted').map((fact) => fact.decision)).toEqual(['done', 'done']);
    expect(session.of('tool.settled').map((settled) => [settled.callId, settled.name, settled.status])).toEqual([
      ['root:e1.0', 'read', 'ok'],
      ['root:e1.1', 'list_dir', 'ok'],
    ]);
  });

  it('decodes a multi-byte character split across chunk boundaries', async () => {
    const bytes = Buffer.from(transcript('openai/utf8.sse'), 'utf8');
    const tokyo = bytes.indexOf(Buffer.from('東'));
    const smile = bytes.indexOf(Buffer.from('🙂'));
    const chunks = [bytes.subarray(0, tokyo + 1), bytes.subarray(tokyo + 1, smile + 2), bytes.subarray(smile + 2)];
    const provider = await serve({ chunks, delayMs: 15 });
    const events = await collect(provider, sampleRequest());
    expect(events).toEqual([
      started,
      { type: 'text-delta', text: 'Grüße aus 東京 🙂' },
      { type: 'text-delta', text: ' — done.' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 9 } },
      { type: 'finished', stopReason: 'end_turn' },
    ]);
    await server!.close();
    const session = await runProviderSession(await serve({ chunks, delayMs: 15 }));
    expect(session.of('model.responded')[0].text).toBe('Grüße aus 東京 🙂 — done.');
  });

  it('reads empty arguments as an empty object', async () => {
    const provider = await serve(streamOf(transcript('openai/empty-arguments.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.filter((event) => event.type === 'tool-intent')).toEqual([{ type: 'tool-intent', providerCallId: 'call_Em0', name: 'list_dir', arguments: {} }]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/empty-arguments.sse'))));
    expect(session.of('tool.settled')[0]).toMatchObject({ name: 'list_dir', status: 'ok' });
    expect(session.result.status).toBe('completed');
  });

  it('streams DeepSeek-style reasoning_content as reasoning deltas', async () => {
    const provider = await serve(streamOf(transcript('openai/reasoning.sse')));
    expect(await collect(provider, sampleRequest())).toEqual([
      { type: 'started', model: 'deepseek-reasoner', requestId: '0f4c2a8e-5b1d-4c7e-9a3f-2d6b8e1c4a70' },
      { type: 'reasoning-delta', text: 'The user wants' },
      { type: 'reasoning-delta', text: ' a greeting.' },
      { type: 'text-delta', text: 'Hi there.' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 12 } },
      { type: 'finished', stopReason: 'end_turn' },
    ]);
  });

  it('a stream that ends without a finish reason proposes nothing and is a retryable network error', async () => {
    const provider = await serve(streamOf(transcript('openai/no-finish.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.map((event) => event.type)).toEqual(['started', 'tool-intent-delta', 'tool-intent-delta', 'error']);
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'network', retryable: true } });

    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/no-finish.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted').map((attempt) => [attempt.attempt, attempt.outcome, attempt.errorCode, attempt.decision])).toEqual([
      [1, 'error', 'network', 'retry'],
      [2, 'ok', undefined, 'done'],
    ]);
    expect(session.of('tool.settled')).toEqual([]);
  });

  it('an error event mid-stream is a provider error; the retry starts the reply afresh', async () => {
    const provider = await serve(streamOf(transcript('openai/error-mid-stream.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events).toEqual([started, { type: 'text-delta', text: 'Let me' }, { type: 'error', error: expect.objectContaining({ code: 'server_error', retryable: true }) }]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('openai/error-mid-stream.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.responded')[0].text).toBe('Hello! How can I help?');
  });

  it('429 with retry-after-ms waits that long, then succeeds', async () => {
    const limited = jsonError(429, { error: { message: 'Rate limit reached for gpt-4.1-mini on tokens per min (TPM). Please try again in 150ms.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '150', 'x-ratelimit-remaining-tokens': '0' });
    const provider = await serve(limited);
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: { code: 'rate_limit', message: expect.any(String), retryable: true, retryAfterMs: 150 } }]);
    await server!.close();
    const times: number[] = [];
    server = await startLoopbackServer((_request, index) => {
      times.push(Date.now());
      return index === 0 ? limited : streamOf(finalText);
    });
    const session = await runProviderSession(createOpenAICompatibleProvider({ model: 'gpt-4.1-mini', baseUrl: `${server.url}/v1`, apiKey }));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted')[0]).toMatchObject({ outcome: 'error', errorCode: 'rate_limit', retryAfterMs: 150, decision: 'retry', delayMs: 150 });
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(140);
  });

  it('insufficient quota is not retried', async () => {
    const provider = await serve(jsonError(429, { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }));
    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('failed');
    expect(session.of('model.failed')[0].error).toMatchObject({ code: 'quota', retryable: false });
    expect(session.of('model.attempted')).toHaveLength(1);
  });

  it('503 overloaded is retried until the budget runs out, then fails the session', async () => {
    const overloaded = jsonError(503, { error: { message: 'The engine is currently overloaded, please try again later', type: 'server_error', param: null, code: null } });
    const provider = await serve(overloaded, overloaded, overloaded);
    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('failed');
    expect(session.of('model.failed')[0].error).toMatchObject({ code: 'overloaded', retryable: true });
    expect(session.of('model.attempted').map((attempt) => attempt.decision)).toEqual(['retry', 'retry', 'fail']);
    expect(session.of('tool.settled')).toEqual([]);
  });

  it('401 fails fast, naming where the key comes from, without the key', async () => {
    const provider = await serve(jsonError(401, { error: { message: `Incorrect API key provided: ${apiKey}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('failed');
    const failure = session.of('model.failed')[0].error;
    expect(failure).toMatchObject({ code: 'auth', retryable: false });
    expect(failure.message).toContain('OPENAI_API_KEY');
    expect(JSON.stringify(session.records)).not.toContain(apiKey);
    expect(server!.requests).toHaveLength(1);
  });

  it('a base URL answering 200 text/html (a proxy or login page) fails at once, naming the content type and what to check (issue 30 B8)', async () => {
    const page = { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, chunks: ['<!doctype html><html><head><title>Sign in</title></head><body>Please sign in</body></html>'] };
    const provider = await serve(page, page, page);
    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('failed');
    const failure = session.of('model.failed')[0].error;
    expect(failure).toMatchObject({ code: 'bad_request', retryable: false });
    expect(failure.message).toContain('text/html');
    expect(failure.message).toContain('check the base URL');
    // Answered at once: one request, no retry.
    expect(server!.requests).toHaveLength(1);
    expect(session.of('model.attempted').map((attempt) => attempt.decision)).toEqual(['fail']);
  });

  it('context length exceeded compacts the context once, then fails when the provider still refuses', async () => {
    const tooLong = jsonError(400, { error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
    const provider = await serve(tooLong, tooLong, tooLong);
    expect((await collect(provider, sampleRequest()))[0]).toMatchObject({ type: 'error', error: { code: 'context_length', retryable: false } });
    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('failed');
    expect(session.of('model.failed')[0].error.code).toBe('context_length');
    expect(session.of('model.attempted')).toEqual([expect.objectContaining({ attempt: 1, decision: 'compact' }), expect.objectContaining({ attempt: 2, decision: 'fail' })]);
    expect(session.of('context.projected').map((fact) => fact.compactionLevel)).toEqual([0, 1]);
  });

  it('a connection refused is a retryable network error', async () => {
    server = await startLoopbackServer(() => streamOf(finalText));
    const url = server.url;
    await server.close();
    server = undefined;
    const provider = createOpenAICompatibleProvider({ model: 'm', baseUrl: `${url}/v1` });
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'network', retryable: true }) }]);
  });

  it('a consumer that stops reading early releases the connection', async () => {
    server = await startLoopbackServer(() => ({ chunks: transcript('openai/text.sse').split(/(?<=\n\n)/), delayMs: 50, hang: true }));
    const provider = createOpenAICompatibleProvider({ model: 'm', baseUrl: `${server.url}/v1` });
    for await (const event of provider.stream(sampleRequest())) {
      expect(event.type).toBe('started');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(server.abandoned).toBe(1);
  });

  it('a stalled stream times out; an aborted request is cancelled and releases the connection', async () => {
    server = await startLoopbackServer(() => ({ chunks: [transcript('openai/text.sse').split('\n\n')[0] + '\n\n'], hang: true }));
    const stalled = createOpenAICompatibleProvider({ model: 'm', baseUrl: `${server.url}/v1`, idleTimeoutMs: 150 });
    expect((await collect(stalled, sampleRequest())).at(-1)).toMatchObject({ type: 'error', error: { code: 'timeout', retryable: true } });
    const controller = new AbortController();
    const slow = createOpenAICompatibleProvider({ model: 'm', baseUrl: `${server.url}/v1` });
    setTimeout(() => controller.abort(), 100);
    expect((await collect(slow, sampleRequest({ signal: controller.signal }))).at(-1)).toMatchObject({ type: 'error', error: { code: 'cancelled', retryable: false } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.abandoned).toBe(2);
  });
});
