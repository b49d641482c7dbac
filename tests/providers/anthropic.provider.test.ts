import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.provider.js';
import { jsonError, startLoopbackServer, streamOf, transcript, type Exchange, type LoopbackServer } from '../support/loopback-server.js';
import { collect, runProviderSession, sampleRequest } from '../support/provider-session.js';

const model = 'claude-sonnet-4-5-20250929';
const apiKey = 'sk-ant-api03-test-0123456789abcdef';
const finalText = transcript('anthropic/text.sse');

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const serve = async (...first: Exchange[]) => {
  server = await startLoopbackServer((_request, index) => first[index] ?? streamOf(finalText));
  return createAnthropicProvider({ model: 'claude-sonnet-4-5', baseUrl: server.url, apiKey });
};

const started = (id: string) => ({ type: 'started', model, requestId: id });
const overloaded = jsonError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });

describe('Anthropic adapter over a loopback server', () => {
  it('takes no token count that is not a whole number (trial 7 G8): a string input count is left to the estimate', async () => {
    const odd = finalText.replaceAll('"input_tokens":25', '"input_tokens":"25"').replace('"output_tokens":12}', '"output_tokens":12.5}');
    expect(odd).not.toBe(finalText);
    const events = await collect(await serve(streamOf(odd)), sampleRequest());
    expect(events.filter((event) => (event as { type: string }).type === 'usage')).toEqual([{ type: 'usage', usage: { inputTokens: 0, outputTokens: 1 } }]);
  });

  it('a stop reason no adapter knows is recorded as unknown with its raw value, never as end_turn (issue 30 E)', async () => {
    const odd = finalText.replace('"stop_reason":"end_turn"', '"stop_reason":"compaction_pending"');
    expect(odd).not.toBe(finalText);
    const provider = await serve(streamOf(odd), streamOf(odd));
    const events = await collect(provider, sampleRequest());
    expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'unknown', rawStopReason: 'compaction_pending' });
    const session = await runProviderSession(provider);
    expect(session.of('model.responded')[0]).toMatchObject({ stopReason: 'unknown', rawStopReason: 'compaction_pending' });
  });

  it('streams plain text (pings ignored), then usage and the finish; builds a Messages request', async () => {
    const provider = await serve(streamOf(finalText, { headers: { 'request-id': 'req_018EeWyXxfu5pfWkrYcMdjWG' } }));
    expect(await collect(provider, sampleRequest())).toEqual([
      started('req_018EeWyXxfu5pfWkrYcMdjWG'),
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: '! How can I help?' },
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 12 } },
      { type: 'finished', stopReason: 'end_turn' },
    ]);
    const [request] = server!.requests;
    expect(request).toMatchObject({ path: '/v1/messages', headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' } });
    expect(request!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      stream: true,
      system: 'You are terse.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Read notes.txt' }] }],
      tools: [{ name: 'read', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
    });
  });

  it('assembles a tool_use block from input_json_delta and proposes it at content_block_stop', async () => {
    const provider = await serve(streamOf(transcript('anthropic/tool-use.sse')));
    const delta = (argumentsDelta: string) => ({ type: 'tool-intent-delta', index: 1, providerCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'read', argumentsDelta });
    expect(await collect(provider, sampleRequest())).toEqual([
      started('msg_014p7gG3wDgGV9EUtLvnow3U'),
      { type: 'text-delta', text: "I'll read the notes." },
      delta(''),
      delta(''),
      delta('{"path": "no'),
      delta('tes.tx'),
      delta('t"}'),
      { type: 'tool-intent', providerCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'read', arguments: { path: 'notes.txt' } },
      { type: 'usage', usage: { inputTokens: 472, outputTokens: 89 } },
      { type: 'finished', stopReason: 'tool_use' },
    ]);

    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/tool-use.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.responded')[0].toolCalls).toEqual([{ callId: 'root:e1.0', name: 'read', arguments: { path: 'notes.txt' }, providerCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6' }]);
    const followUp = server!.requests[1]!.body.messages;
    expect(followUp).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Read notes.txt' }] },
      { role: 'assistant', content: [{ type: 'text', text: "I'll read the notes." }, { type: 'tool_use', id: 'root_e1_0', name: 'read', input: { path: 'notes.txt' } }] },
      // The history's last block carries the cache breakpoint; the round's state follows it, last.
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'root_e1_0', content: expect.stringContaining('remember the milk'), cache_control: { type: 'ephemeral' } }, { type: 'text', text: expect.stringMatching(/^<turn-context [\s\S]*model turns so far: 1/) }] },
    ]);
  });

  it('assembles interleaved parallel tool_use blocks independently; all results travel in one user message', async () => {
    const provider = await serve(streamOf(transcript('anthropic/parallel-tool-use.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.filter((event) => event.type !== 'tool-intent-delta')).toEqual([
      started('msg_01Par4llelT00lUse9zQ'),
      { type: 'tool-intent', providerCallId: 'toolu_01Bbbb', name: 'list_dir', arguments: { path: '.' } },
      { type: 'tool-intent', providerCallId: 'toolu_01Aaaa', name: 'read', arguments: { path: 'notes.txt' } },
      { type: 'usage', usage: { inputTokens: 480, outputTokens: 61 } },
      { type: 'finished', stopReason: 'tool_use' },
    ]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/parallel-tool-use.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('tool.settled').map((settled) => [settled.callId, settled.name, settled.status])).toEqual([
      ['root:e1.0', 'list_dir', 'ok'],
      ['root:e1.1', 'read', 'ok'],
    ]);
    const lastUser = server!.requests[1]!.body.messages.at(-1);
    expect(lastUser.content.map((block: { type: string; tool_use_id: string }) => [block.type, block.tool_use_id])).toEqual([
      ['tool_result', 'root_e1_0'],
      ['tool_result', 'root_e1_1'],
      ['text', undefined],
    ]);
  });

  it('streams thinking deltas as reasoning (signatures are not text)', async () => {
    const provider = await serve(streamOf(transcript('anthropic/thinking.sse')));
    expect(await collect(provider, sampleRequest())).toEqual([
      started('msg_01Th1nk1ngStr34m'),
      { type: 'reasoning-delta', text: 'The user greets me; ' },
      { type: 'reasoning-delta', text: 'answer briefly.' },
      { type: 'text-delta', text: 'Hi!' },
      { type: 'usage', usage: { inputTokens: 36, outputTokens: 40 } },
      { type: 'finished', stopReason: 'end_turn' },
    ]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/thinking.sse'))));
    expect(session.of('model.responded')[0]).toMatchObject({ text: 'Hi!', reasoning: 'The user greets me; answer briefly.' });
  });

  it('decodes a multi-byte character split across chunk boundaries', async () => {
    const bytes = Buffer.from(transcript('anthropic/utf8.sse'), 'utf8');
    const umlaut = bytes.indexOf(Buffer.from('ü'));
    const smile = bytes.indexOf(Buffer.from('🙂'));
    const chunks = [bytes.subarray(0, umlaut + 1), bytes.subarray(umlaut + 1, smile + 3), bytes.subarray(smile + 3)];
    const provider = await serve({ chunks, delayMs: 15 });
    expect((await collect(provider, sampleRequest())).filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'Grüße aus 東京 🙂' },
      { type: 'text-delta', text: ' — done.' },
    ]);
  });

  it('reads an empty tool input as an empty object', async () => {
    const provider = await serve(streamOf(transcript('anthropic/empty-input.sse')));
    expect((await collect(provider, sampleRequest())).filter((event) => event.type === 'tool-intent')).toEqual([{ type: 'tool-intent', providerCallId: 'toolu_01Empty', name: 'list_dir', arguments: {} }]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/empty-input.sse'))));
    expect(session.of('tool.settled')[0]).toMatchObject({ name: 'list_dir', status: 'ok' });
  });

  it('pause_turn continues the turn with another model call', async () => {
    const provider = await serve(streamOf(transcript('anthropic/pause-turn.sse')));
    expect((await collect(provider, sampleRequest())).at(-1)).toEqual({ type: 'finished', stopReason: 'pause_turn' });
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/pause-turn.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.responded').map((reply) => reply.stopReason)).toEqual(['pause_turn', 'end_turn']);
    const continued = server!.requests[1]!.body.messages;
    // The reply the model continues stays last (no round state after it); it ends the cached history.
    expect(continued.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Still searching…', cache_control: { type: 'ephemeral' } }] });
  });

  it('a stream that stops before message_stop proposes nothing and is a retryable network error', async () => {
    const provider = await serve(streamOf(transcript('anthropic/no-stop.sse')));
    const events = await collect(provider, sampleRequest());
    expect(events.map((event) => event.type)).toEqual(['started', 'text-delta', 'tool-intent-delta', 'tool-intent-delta', 'error']);
    expect(events.at(-1)).toMatchObject({ error: { code: 'network', retryable: true } });
    await server!.close();
    const cut = streamOf(transcript('anthropic/no-stop.sse'));
    const session = await runProviderSession(await serve(cut, cut, cut));
    expect(session.result.status).toBe('failed');
    expect(session.of('model.failed')[0].error).toMatchObject({ code: 'network' });
    expect(session.of('model.attempted')).toHaveLength(3);
    expect(session.of('tool.settled')).toEqual([]);
  });

  it('an error event mid-stream (overloaded) is a retryable provider error', async () => {
    const provider = await serve(streamOf(transcript('anthropic/error-mid-stream.sse')));
    expect(await collect(provider, sampleRequest())).toEqual([
      started('msg_01Err'),
      { type: 'text-delta', text: 'Let me' },
      { type: 'error', error: expect.objectContaining({ code: 'overloaded', retryable: true }) },
    ]);
    await server!.close();
    const session = await runProviderSession(await serve(streamOf(transcript('anthropic/error-mid-stream.sse'))));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted').map((attempt) => attempt.errorCode ?? attempt.outcome)).toEqual(['overloaded', 'ok']);
  });

  it('429 with retry-after (seconds) waits that long, then succeeds', async () => {
    const limited = jsonError(429, { type: 'error', error: { type: 'rate_limit_error', message: 'This request would exceed the rate limit for your organization of 50,000 input tokens per minute.' } }, { 'retry-after': '1', 'anthropic-ratelimit-input-tokens-remaining': '0' });
    const provider = await serve(limited);
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: { code: 'rate_limit', message: expect.any(String), retryable: true, retryAfterMs: 1000 } }]);
    await server!.close();
    const times: number[] = [];
    server = await startLoopbackServer((_request, index) => {
      times.push(Date.now());
      return index === 0 ? limited : streamOf(finalText);
    });
    const session = await runProviderSession(createAnthropicProvider({ model: 'claude-sonnet-4-5', baseUrl: server.url, apiKey }));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted')[0]).toMatchObject({ errorCode: 'rate_limit', retryAfterMs: 1000, delayMs: 1000, decision: 'retry' });
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(990);
  });

  it('529 overloaded is retried, then fails the session when it persists', async () => {
    const provider = await serve(overloaded);
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'overloaded', retryable: true }) }]);
    await server!.close();
    const session = await runProviderSession(await serve(overloaded, overloaded, overloaded));
    expect(session.result.status).toBe('failed');
    expect(session.of('model.failed')[0].error.code).toBe('overloaded');
    expect(session.of('model.attempted').map((attempt) => attempt.decision)).toEqual(['retry', 'retry', 'fail']);
  });

  it('401 fails fast without a retry and without the key', async () => {
    const denied = jsonError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: 'req_011CSHq7Y5n1e9f' });
    const provider = await serve(denied);
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: { code: 'auth', message: expect.stringContaining('ANTHROPIC_API_KEY'), retryable: false } }]);
    await server!.close();
    const session = await runProviderSession(await serve(denied));
    expect(session.result.status).toBe('failed');
    expect(session.of('model.attempted')).toHaveLength(1);
    expect(JSON.stringify(session.records)).not.toContain(apiKey);
  });

  it('stop reason model_context_window_exceeded is context_length, not an output-limit cut: no continuation; the session compacts once, and fails context_length when it persists (trial 6 F19)', async () => {
    const full = streamOf(transcript('anthropic/context-window-exceeded.sse'));
    const provider = await serve(full);
    expect((await collect(provider, sampleRequest())).at(-1)).toEqual({ type: 'error', error: expect.objectContaining({ code: 'context_length', retryable: false, message: expect.stringContaining('model_context_window_exceeded') }) });
    await server!.close();
    const recovered = await runProviderSession(await serve(full));
    expect(recovered.result.status).toBe('completed');
    expect(recovered.of('model.attempted').map((fact) => fact.decision)).toEqual(['compact', 'done']);
    expect(recovered.of('model.responded').map((reply) => reply.stopReason)).toEqual(['end_turn']);
    await server!.close();
    const persisting = await runProviderSession(await serve(full, full, full));
    expect(persisting.result.status).toBe('failed');
    expect(persisting.of('model.failed')[0].error).toMatchObject({ code: 'context_length' });
    expect(persisting.of('model.responded')).toEqual([]);
    expect(server!.requests).toHaveLength(2);
    expect(JSON.stringify(persisting.result)).not.toContain('maxOutputTokens');
  });

  it('"prompt is too long" is context_length; the session compacts its context once and the retry succeeds', async () => {
    const tooLong = jsonError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } });
    const provider = await serve(tooLong);
    expect(await collect(provider, sampleRequest())).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'context_length', retryable: false }) }]);
    await server!.close();
    const session = await runProviderSession(await serve(tooLong));
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted').map((fact) => fact.decision)).toEqual(['compact', 'done']);
    expect(session.of('context.projected').map((fact) => fact.compactionLevel)).toEqual([0, 1]);
  });
});
