import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { ToolCallAssembler } from '../../src/providers/tool-call-assembler.js';
import { startLoopbackServer, streamOf, transcript, type LoopbackServer } from '../support/loopback-server.js';
import { collect, runProviderSession, sampleRequest } from '../support/provider-session.js';

describe('ToolCallAssembler', () => {
  it('proposes nothing before complete, even when a prefix already parses', () => {
    const assembler = new ToolCallAssembler();
    assembler.delta(0, { providerCallId: 'c1', name: 'bash', argumentsDelta: '{"command":"npm test"}' });
    assembler.delta(0, { argumentsDelta: '' });
    expect(assembler.open).toBe(1);
    assembler.delta(0, { argumentsDelta: ' ' });
    expect(assembler.complete(0)).toEqual({ type: 'tool-intent', providerCallId: 'c1', name: 'bash', arguments: { command: 'npm test' } });
  });

  it('keeps the first id and name (servers that repeat them are not doubled)', () => {
    const assembler = new ToolCallAssembler();
    assembler.delta(0, { providerCallId: 'c1', name: 'read', argumentsDelta: '{"path":' });
    assembler.delta(0, { providerCallId: 'c1', name: 'read', argumentsDelta: '"a"}' });
    expect(assembler.complete(0)).toMatchObject({ name: 'read', providerCallId: 'c1', arguments: { path: 'a' } });
  });

  it('reports malformed and non-object arguments, and calls without a name, as malformed_tool_call', () => {
    const assembler = new ToolCallAssembler();
    assembler.delta(0, { name: 'read', argumentsDelta: '{"path": "a"' });
    assembler.delta(1, { name: 'read', argumentsDelta: '["a"]' });
    assembler.delta(2, { argumentsDelta: '{}' });
    const [broken, array, nameless] = assembler.completeAll();
    for (const result of [broken, array, nameless]) expect(result).toMatchObject({ code: 'malformed_tool_call', retryable: true });
    expect(assembler.complete(7)).toMatchObject({ code: 'malformed_tool_call' });
  });
});

describe('malformed tool-call arguments from a real stream', () => {
  let server: LoopbackServer | undefined;
  afterEach(() => server?.close());

  it('are a retryable malformed_tool_call: nothing is proposed, nothing runs, and a fresh sample can fix it', async () => {
    const broken = transcript('openai/tool-call.sse').replace('{"arguments":"\\"}"}', '{"arguments":"\\""}');
    expect(broken).not.toBe(transcript('openai/tool-call.sse'));
    server = await startLoopbackServer((_request, index) => streamOf(index === 0 || index === 1 ? broken : index === 2 ? transcript('openai/tool-call.sse') : transcript('openai/text.sse')));
    const provider = createOpenAICompatibleProvider({ model: 'm', baseUrl: `${server.url}/v1` });
    const events = await collect(provider, sampleRequest());
    expect(events.filter((event) => event.type === 'tool-intent')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'malformed_tool_call', retryable: true } });

    const session = await runProviderSession(provider);
    expect(session.result.status).toBe('completed');
    expect(session.of('model.attempted').slice(0, 2).map((attempt) => [attempt.errorCode, attempt.decision])).toEqual([
      ['malformed_tool_call', 'retry'],
      [undefined, 'done'],
    ]);
    expect(session.of('tool.settled')).toHaveLength(1);
  });
});
