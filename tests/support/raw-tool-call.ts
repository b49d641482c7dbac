import { z } from 'zod';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';

/** A chat-completions stream whose one tool call carries `argumentsText` exactly as written (no JSON.stringify). */
export const rawToolCallChunks = (name: string, argumentsText: string): string[] => {
  const chunk = (choices: unknown[], usage: unknown = null) => `data: ${JSON.stringify({ id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1764101234, model: 'loopback-1', choices, usage })}\n\n`;
  const chunks = [chunk([{ index: 0, delta: { role: 'assistant', content: 'Calling.' }, finish_reason: null }])];
  chunks.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_raw', type: 'function', function: { name, arguments: '' } }] }, finish_reason: null }]));
  for (let offset = 0; offset < argumentsText.length; offset += 64) chunks.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(offset, offset + 64) } }] }, finish_reason: null }]));
  chunks.push(chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
  chunks.push(chunk([], { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));
  chunks.push('data: [DONE]\n\n');
  return chunks;
};

/** The final text reply that ends a session. */
export const doneChunks = (): string[] => {
  const chunk = (choices: unknown[]) => `data: ${JSON.stringify({ id: 'chatcmpl-done', object: 'chat.completion.chunk', created: 1764101234, model: 'loopback-1', choices, usage: null })}\n\n`;
  return [chunk([{ index: 0, delta: { role: 'assistant', content: 'Done.' }, finish_reason: null }]), chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), 'data: [DONE]\n\n'];
};

/** A tool that accepts any object and echoes what it was given: the call runs whatever keys it holds. */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Echo the arguments.',
  parameters: z.record(z.string(), z.unknown()),
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  execute: async (args) => ({ ok: true, output: `keys: ${Object.keys(args).join(',')}` }),
});
