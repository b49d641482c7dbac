import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, exportSessionSpans } from 'rein';
import { reinScope } from '../../src/telemetry/instrumentation-scope.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = { turns: [{ text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Empty.' }] };

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-chat-prompt-');
});
afterAll(() => workspace.remove());

/** Run one scripted session with live telemetry and return its spans as the exporter got them. */
const runWithTelemetry = async (telemetry: { captureContent?: boolean; serviceName?: string }) => {
  const exporter = new InMemorySpanExporter();
  const store = createMemoryEventStore();
  const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(script), telemetry: { exporter, ...telemetry } });
  const session = await rein.startSession({ task: 'list the workspace please' });
  await session.whenQuiet();
  await rein.telemetry!.flush();
  return { spans: exporter.getFinishedSpans(), store, sessionId: session.id };
};

describe('a chat span with content capture on', () => {
  it('carries its prompt: the input messages, the system instructions and the tool definitions', async () => {
    const { spans, store, sessionId } = await runWithTelemetry({ captureContent: true });
    const chats = spans.filter((span) => span.name.startsWith('chat'));
    expect(chats).toHaveLength(2);
    const [first, second] = chats.map((span) => span.attributes);
    const firstInput = JSON.parse(String(first!['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ type: string; content?: string }> }>;
    expect(firstInput).toContainEqual({ role: 'user', parts: [expect.objectContaining({ type: 'text', content: expect.stringContaining('list the workspace please') })] });
    expect(JSON.parse(String(first!['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: expect.any(String) }]);
    expect((JSON.parse(String(first!['gen_ai.tool.definitions'])) as Array<{ name: string }>).map((tool) => tool.name)).toContain('list_dir');
    // The second call's prompt holds the first answer's tool call and its result.
    const secondInput = JSON.parse(String(second!['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ type: string }> }>;
    expect(secondInput.flatMap((message) => message.parts.map((part) => part.type))).toEqual(expect.arrayContaining(['tool_call', 'tool_call_response']));

    // An export from the log carries the same prompts.
    const exporter = new InMemorySpanExporter();
    await exportSessionSpans(store, sessionId, { exporter, captureContent: true });
    const exported = exporter.getFinishedSpans().filter((span) => span.name.startsWith('chat'));
    expect(exported.map((span) => span.attributes['gen_ai.input.messages'])).toEqual(chats.map((span) => span.attributes['gen_ai.input.messages']));
  });

  it('carries no prompt when content capture is off', async () => {
    const { spans } = await runWithTelemetry({});
    for (const span of spans.filter((candidate) => candidate.name.startsWith('chat'))) {
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.system_instructions']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.definitions']).toBeUndefined();
    }
  });
});

describe("rein's version", () => {
  it('is in the instrumentation scope, not the service.version of the host’s service', async () => {
    const { spans } = await runWithTelemetry({ serviceName: 'billing-api' });
    const span = spans[0]!;
    expect(span.instrumentationScope).toMatchObject({ name: 'rein', version: reinScope.version });
    expect(span.resource.attributes['service.name']).toBe('billing-api');
    expect(span.resource.attributes['service.version']).toBeUndefined();
  });

  it('is the service.version when the service is rein itself', async () => {
    const { spans } = await runWithTelemetry({});
    expect(spans[0]!.resource.attributes).toMatchObject({ 'service.name': 'rein', 'service.version': reinScope.version });
  });
});
