import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { AcpUpdates, loadUpdates } from '../../src/acp/acp-updates.js';
import { toolDiffsOf, toolKindOf, toolTitleOf } from '../../src/acp/acp-tool-call.js';
import { editorServersOf } from '../../src/acp/acp-harness.js';
import { promptText } from '../../src/acp/acp-agent.js';

let seq = 0;
const record = (type: string, data: Record<string, unknown>, actor = 'root'): RecordEnvelope => ({ stream: 's', seq: ++seq, id: `r${seq}`, type, v: 1, at: 0, actor, data });
const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n keep\n-old\n+new\n*** Add File: b.ts\n+b\n*** Delete File: c.ts\n*** End Patch';

describe('ACP updates from records', () => {
  it('maps a turn: messages, tool calls (pending → in progress → settled with diffs), the plan; only the root agent', () => {
    const records = [
      record('user.message', { text: 'fix it' }),
      record('model.responded', { effectId: 'root:e1', text: 'Patching.', reasoning: 'hm', toolCalls: [{ callId: 'c1', name: 'apply_patch', arguments: { input: patch } }, { callId: 'c2', name: 'edit', arguments: { path: 'x.ts', old_string: 'a', new_string: 'b' } }] }),
      record('tool.started', { effectId: 'root:e2', callId: 'c1' }),
      record('tool.settled', { effectId: 'root:e2', callId: 'c1', name: 'apply_patch', status: 'ok', observation: 'applied', elapsedMs: 1 }),
      record('tool.settled', { effectId: 'root:e3', callId: 'c2', name: 'edit', status: 'error', errorCode: 'InvalidInput', observation: 'InvalidInput: not found', elapsedMs: 1 }),
      record('plan.updated', { effectId: 'root:e4', callId: 'c3', plan: [{ step: 'patch', status: 'completed' }] }),
      record('model.responded', { effectId: 'root:e9', text: 'child talk', toolCalls: [] }, 'root/delegation-1/t1'),
    ];
    const { updates } = loadUpdates(records, '/w');
    expect(updates.map((update) => update.sessionUpdate)).toEqual(['user_message_chunk', 'agent_thought_chunk', 'agent_message_chunk', 'tool_call', 'tool_call', 'tool_call_update', 'tool_call_update', 'tool_call_update', 'plan']);
    expect(updates[3]).toMatchObject({ toolCallId: 'c1', kind: 'edit', title: 'apply_patch patch src/a.ts, b.ts (+1 more)', locations: [{ path: '/w/src/a.ts' }, { path: '/w/b.ts' }, { path: '/w/c.ts' }] });
    expect(updates[6]).toEqual({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c1',
      status: 'completed',
      content: [
        { type: 'content', content: { type: 'text', text: 'applied' } },
        { type: 'diff', path: '/w/src/a.ts', oldText: 'keep\nold', newText: 'keep\nnew' },
        { type: 'diff', path: '/w/b.ts', newText: 'b\n' },
      ],
    });
    // A failed call shows its output and no diff.
    expect(updates[7]).toEqual({ sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'InvalidInput: not found' } }] });
  });

  it('a live turn does not echo the user, nor repeat text it streamed; a call settled after a load is still known', () => {
    const { mapper } = loadUpdates([record('model.responded', { effectId: 'root:e1', text: 'Running.', toolCalls: [{ callId: 'c1', name: 'bash', arguments: { command: 'sleep 9' } }] })], '/w');
    const live = mapper.live();
    expect(live.updates(record('user.message', { text: 'again' }))).toEqual([]);
    expect(live.updates(record('tool.settled', { effectId: 'root:e2', callId: 'c1', name: 'bash', status: 'error', errorCode: 'InDoubt', observation: 'InDoubt: interrupted', elapsedMs: 0 }))).toMatchObject([{ toolCallId: 'c1', status: 'failed' }]);
    const fresh = new AcpUpdates('/w', 'live');
    fresh.markStreamed('root:e5');
    expect(fresh.updates(record('model.responded', { effectId: 'root:e5', text: 'streamed', toolCalls: [] }))).toEqual([]);
  });

  it('kinds, titles and diffs of tool calls', () => {
    expect(toolKindOf('bash', {})).toBe('execute');
    expect(toolKindOf('grep', {})).toBe('search');
    expect(toolKindOf('mcp__x__y', {})).toBe('other');
    expect(toolKindOf('apply_patch', { input: '*** Begin Patch\n*** Delete File: a\n*** End Patch' })).toBe('delete');
    expect(toolKindOf('apply_patch', { input: '*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n x\n*** End Patch' })).toBe('move');
    expect(toolTitleOf('update_plan', { plan: [{ step: 'a', status: 'completed' }, { step: 'b', status: 'pending' }] })).toBe('update plan (1 of 2 done)');
    expect(toolDiffsOf('write', { path: 'n.txt', content: 'x' }, '/w', new Set(['n.txt']))).toEqual([{ type: 'diff', path: '/w/n.txt', newText: 'x' }]);
    expect(toolDiffsOf('write', { path: 'n.txt', content: 'x' }, '/w', new Set())).toEqual([]);
  });

  it('prompts and editor MCP servers', () => {
    expect(promptText([{ type: 'text', text: 'look at' }, { type: 'resource_link', name: 'a.ts', uri: 'file:///w/a.ts' }, { type: 'resource', resource: { uri: 'file:///w/b.ts', text: 'const b = 1;' } }])).toBe('look at\n\n[@a.ts](file:///w/a.ts)\n\n<context ref="file:///w/b.ts">\nconst b = 1;\n</context>');
    expect(() => promptText([{ type: 'text', text: '  ' }])).toThrow();
    expect(editorServersOf([{ name: 'fs', command: 'npx', args: ['-y', 'srv'], env: [{ name: 'K', value: 'v' }] }, { type: 'http', name: 'web', url: 'http://127.0.0.1:1/mcp', headers: [{ name: 'A', value: 'b' }] }, { type: 'sse', name: 'old', url: 'http://x', headers: [] }])).toEqual({
      servers: { fs: { command: 'npx', args: ['-y', 'srv'], env: { K: 'v' } }, web: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { A: 'b' } } },
      warnings: ["the editor's MCP server old uses SSE, which rein does not speak: it did not start"],
    });
  });
});
