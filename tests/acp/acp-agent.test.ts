import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { methods, RequestError, type SessionUpdate } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { loadUpdates } from '../../src/acp/acp-updates.js';
import { coalesced, startAcp, type AcpEditor } from '../support/acp-client.js';
import { everythingPath } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * `rein acp` as an editor runs it: a child process spoken to over stdio by the official SDK's client side, with the
 * scripted provider as the model.
 */

const errorOf = async (promise: Promise<unknown>): Promise<RequestError> => {
  try {
    await promise;
  } catch (error) {
    return error as RequestError;
  }
  throw new Error('expected the request to fail');
};

const kinds = (updates: readonly SessionUpdate[]) => updates.map((update) => update.sessionUpdate);

describe('rein acp', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let configHome: { path: string; remove: () => Promise<void> };
  const editors: AcpEditor[] = [];
  const env = () => ({ REIN_CONFIG_HOME: configHome.path });
  const start = async (script: unknown, flags: string[] = []) => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const editor = await startAcp(['--script', join(workspace.path, 'script.json'), ...flags], { cwd: workspace.path, env: env() });
    editors.push(editor);
    return editor;
  };
  const readLog = async (sessionId: string) => {
    const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
    try {
      return await store.read(sessionId);
    } finally {
      await store.close();
    }
  };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-acp-');
    configHome = await makeTempDir('rein-acp-config-');
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
  });
  afterEach(async () => {
    for (const editor of editors.splice(0)) await editor.close();
    await workspace.remove();
    await configHome.remove();
  });

  it('runs a prompt turn: streamed text, tool calls with kind, locations and diffs, the plan, a permission asked both ways', async () => {
    const editor = await start({
      turns: [
        { text: 'Reading it.', reasoning: 'a.txt first', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }, { name: 'update_plan', arguments: { plan: [{ step: 'read a.txt', status: 'completed' }, { step: 'write b.txt', status: 'in_progress' }] } }] },
        { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'HELLO\n' } }] },
        { text: 'Also c.', toolCalls: [{ name: 'write', arguments: { path: 'c.txt', content: 'no\n' } }] },
        { text: 'Done: b.txt holds it.' },
      ],
    });
    const { sessionId, modes } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    expect(modes?.currentModeId).toBe('default');
    editor.answer = (request) => (request.toolCall.title === 'write b.txt' ? 'allow-once' : 'deny');
    const { stopReason } = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'copy a.txt to b.txt in capitals' }] });
    expect(stopReason).toBe('end_turn');
    expect(await readFile(join(workspace.path, 'b.txt'), 'utf8')).toBe('HELLO\n');
    expect(existsSync(join(workspace.path, 'c.txt'))).toBe(false);

    // Both permission requests offered allow once / always / reject; the first was allowed, the second rejected.
    expect(editor.asked.map((request) => [request.toolCall.title, request.options.map((option) => option.kind)])).toEqual([
      ['write b.txt', ['allow_once', 'allow_always', 'reject_once']],
      ['write c.txt', ['allow_once', 'allow_always', 'reject_once']],
    ]);
    const updates = editor.updatesOf(sessionId);
    const shown = coalesced(updates);
    expect(shown[0]).toEqual({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'a.txt first' } });
    expect(shown[1]).toEqual({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Reading it.' } });
    expect(shown.find((update) => update.sessionUpdate === 'tool_call' && update.toolCallId === 'root:e1.0')).toMatchObject({ title: 'read a.txt', kind: 'read', status: 'pending', locations: [{ path: join(workspace.path, 'a.txt') }], rawInput: { path: 'a.txt' } });
    expect(shown.find((update) => update.sessionUpdate === 'plan')).toEqual({ sessionUpdate: 'plan', entries: [{ content: 'read a.txt', priority: 'medium', status: 'completed' }, { content: 'write b.txt', priority: 'medium', status: 'in_progress' }] });
    const settled = shown.filter((update) => update.sessionUpdate === 'tool_call_update' && update.status !== 'in_progress');
    expect(settled.map((update) => update.sessionUpdate === 'tool_call_update' && [update.toolCallId, update.status])).toEqual([
      ['root:e1.0', 'completed'],
      ['root:e1.1', 'completed'],
      ['root:e4.0', 'completed'],
      ['root:e7.0', 'failed'],
    ]);
    expect(settled[2]).toMatchObject({ content: [{ type: 'content' }, { type: 'diff', path: join(workspace.path, 'b.txt'), newText: 'HELLO\n' }] });
    expect(JSON.stringify(settled[3])).toContain('Denied');
    expect(coalesced(updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).map((update) => update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' && update.content.text)).toEqual(['Reading it.Writing.Also c.Done: b.txt holds it.']);

    // It is a normal rein session: in the log, as a conversation that waits for the next prompt.
    const records = await readLog(sessionId);
    expect(records[0]).toMatchObject({ type: 'session.created', data: { task: 'copy a.txt to b.txt in capitals', conversation: true, workspace: workspace.path } });
    expect(records.filter((record) => record.type === 'approval.replied').map((record) => (record.data as { decision: string }).decision)).toEqual(['allow-once', 'deny']);
  });

  it('session/cancel interrupts a running tool as Ctrl-C does; the next prompt resumes the session without running it again', async () => {
    const editor = await start({
      turns: [
        { text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] },
        { text: 'The wait was cut short.' },
        { text: 'Going on.' },
      ],
    });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    const turn = editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'wait a bit' }] });
    // Cancel once the command runs (its tool call went in progress).
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (editor.updatesOf(sessionId).some((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'root:e1.0' && update.status === 'in_progress')) {
          clearInterval(timer);
          resolve();
        }
      }, 20);
      turn.catch(reject);
    });
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await turn).stopReason).toBe('cancelled');

    const next = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go on' }] });
    expect(next.stopReason).toBe('end_turn');
    const records = await readLog(sessionId);
    const types = records.map((record) => record.type);
    expect(types.indexOf('session.interrupted')).toBeGreaterThan(0);
    expect(types.indexOf('session.resumed')).toBeGreaterThan(types.indexOf('session.interrupted'));
    expect(records.find((record) => record.type === 'session.interrupted')?.data).toMatchObject({ reason: 'cancelled from the editor (session/cancel)', running: ['root:e3'] });
    expect(records.find((record) => record.type === 'effect.resolved')?.data).toMatchObject({ effectId: 'root:e3', resolution: 'failed-in-doubt' });
    expect(records.find((record) => record.type === 'tool.settled')?.data).toMatchObject({ callId: 'root:e1.0', status: 'error', errorCode: 'InDoubt' });
    // The cancelled call's tool call was settled in the next turn, as failed.
    expect(editor.updatesOf(sessionId).filter((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'root:e1.0').map((update) => update.sessionUpdate === 'tool_call_update' && update.status)).toEqual(['in_progress', 'failed']);
  });

  it('session/load in another process replays the conversation exactly as the log has it, and the session goes on', async () => {
    const first = await start({
      turns: [
        { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }, { name: 'apply_patch', arguments: { input: '*** Begin Patch\n*** Add File: d.txt\n+new\n*** End Patch' } }] },
        { text: 'First answer.' },
        { text: 'Second answer.' },
        { text: 'After the load.' },
      ],
    }, ['--mode', 'accept-edits']);
    const { sessionId } = await first.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    await first.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'one' }] });
    await first.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'two' }] });
    const live = first.updatesOf(sessionId);
    expect(await first.close()).toBe(0);

    const second = await start(JSON.parse(await readFile(join(workspace.path, 'script.json'), 'utf8')), ['--mode', 'accept-edits']);
    const loaded = await second.agent.request(methods.agent.session.load, { sessionId, cwd: workspace.path, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('accept-edits');
    const replayed = second.updatesOf(sessionId);
    // Exactly what the log stands for…
    const records = await readLog(sessionId);
    expect(replayed).toEqual(JSON.parse(JSON.stringify(loadUpdates(records, workspace.path).updates)));
    // …which is what the live turns showed, with the user's messages.
    expect(replayed.filter((update) => update.sessionUpdate === 'user_message_chunk').map((update) => update.sessionUpdate === 'user_message_chunk' && update.content.type === 'text' && update.content.text)).toEqual(['one', 'two']);
    expect(coalesced(replayed.filter((update) => update.sessionUpdate !== 'user_message_chunk'))).toEqual(coalesced(live));
    expect(kinds(replayed)).toContain('tool_call');
    expect(replayed.find((update) => update.sessionUpdate === 'tool_call' && update.title.startsWith('apply_patch'))).toMatchObject({ kind: 'edit', locations: [{ path: join(workspace.path, 'd.txt') }] });

    // The loaded session takes the next prompt.
    const from = second.updates.length;
    expect((await second.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'three' }] })).stopReason).toBe('end_turn');
    expect(coalesced(second.updatesOf(sessionId, from))).toEqual([{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'After the load.' } }]);
  });

  it('answers bad input with JSON-RPC errors and keeps serving', async () => {
    const editor = await start({ turns: [{ text: 'fine' }] });
    expect((await errorOf(editor.agent.request('session/bogus', {}))).code).toBe(-32601);
    expect((await errorOf(editor.agent.request(methods.agent.session.prompt, { sessionId: 'x' } as never))).code).toBe(-32602);
    const unknown = await errorOf(editor.agent.request(methods.agent.session.prompt, { sessionId: 's-20260101-000000-000000', prompt: [{ type: 'text', text: 'hi' }] }));
    expect(unknown.code).toBe(-32002);
    expect(unknown.data).toEqual({ sessionId: 's-20260101-000000-000000' });
    expect((await errorOf(editor.agent.request(methods.agent.session.new, { cwd: 'relative/path', mcpServers: [] }))).code).toBe(-32602);
    expect((await errorOf(editor.agent.request(methods.agent.session.load, { sessionId: 's-20260101-000000-000000', cwd: workspace.path, mcpServers: [] }))).code).toBe(-32002);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    expect((await errorOf(editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }))).code).toBe(-32602);
    expect((await errorOf(editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'yolo' }))).code).toBe(-32602);
    // Still alive and answering.
    expect((await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] })).stopReason).toBe('end_turn');
  });

  it('session/load of a session another process holds waits briefly, then answers -32010 (session busy)', async () => {
    const editor = await start({ turns: [{ text: 'one' }] });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    // This process still holds it (an idle conversation): another editor's load is refused.
    const other = await start({ turns: [{ text: 'two' }] });
    const busy = await errorOf(other.agent.request(methods.agent.session.load, { sessionId, cwd: workspace.path, mcpServers: [] }));
    expect(busy.code).toBe(-32010);
    expect(busy.data).toMatchObject({ code: 'STORE_LOCKED', sessionId });
  });

  it('ends turns with the stop reason the model gave: refusal, max_tokens; and max_turn_requests when the turn budget is spent', async () => {
    // A content filter stops the reply: the turn ends `refusal`, and so does the session (a `content_filter` model failure).
    const filtered = await start({ turns: [{ text: 'I will not do that.', stopReason: 'content_filter' }] });
    const { sessionId: refusing } = await filtered.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    expect((await filtered.agent.request(methods.agent.session.prompt, { sessionId: refusing, prompt: [{ type: 'text', text: 'do something bad' }] })).stopReason).toBe('refusal');
    expect((await errorOf(filtered.agent.request(methods.agent.session.prompt, { sessionId: refusing, prompt: [{ type: 'text', text: 'again' }] }))).data).toMatchObject({ code: 'SESSION_ENDED' });
    const cut = { text: 'a long answer…', stopReason: 'max_tokens' };
    const editor = await start({ turns: [cut, cut, cut, cut, { text: 'x', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }] }, ['--max-turns', '5']);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    const ask = (text: string) => editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    expect((await ask('write a lot')).stopReason).toBe('max_tokens');
    expect((await ask('and more')).stopReason).toBe('max_turn_requests');
    // The session ended there: a further prompt is refused with rein's code.
    const ended = await errorOf(ask('still there?'));
    expect(ended.code).toBe(-32011);
    expect(ended.data).toMatchObject({ code: 'SESSION_ENDED' });
  });

  it('session/set_mode: plan mode hides what changes files; the mode change is recorded when the session resumes under it', async () => {
    const editor = await start({ turns: [{ text: 'one' }, { text: 'try', toolCalls: [{ name: 'write', arguments: { path: 'p.txt', content: 'x' } }] }, { text: 'could not' }] });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [] });
    await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
    expect(editor.updatesOf(sessionId).some((update) => update.sessionUpdate === 'current_mode_update' && update.currentModeId === 'plan')).toBe(true);
    expect((await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write p.txt' }] })).stopReason).toBe('end_turn');
    expect(existsSync(join(workspace.path, 'p.txt'))).toBe(false);
    expect(editor.asked).toEqual([]);
    const records = await readLog(sessionId);
    expect(records.some((record) => record.type === 'policy.changed')).toBe(true);
    expect(records.find((record) => record.type === 'tool.settled')?.data).toMatchObject({ name: 'write', errorCode: 'Denied' });
  });

  it('the editor\'s MCP servers join the workspace\'s; trust for the workspace\'s .mcp.json is asked through a permission request', async () => {
    await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { project: { command: process.execPath, args: [everythingPath, 'stdio'] } } }));
    const editor = await start({
      turns: [{ text: 'Echoing.', toolCalls: [{ name: 'mcp__project__echo', arguments: { message: 'from the project' } }, { name: 'mcp__editor__echo', arguments: { message: 'from the editor' } }] }, { text: 'Done.' }],
    });
    editor.answer = (request) => (request.options.some((option) => option.optionId === 'trust') ? 'trust' : 'allow-once');
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workspace.path, mcpServers: [{ name: 'editor', command: process.execPath, args: [everythingPath, 'stdio'], env: [] }] });
    expect((await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'echo twice' }] })).stopReason).toBe('end_turn');
    expect(editor.asked[0]).toMatchObject({ toolCall: { title: 'trust the MCP servers of .mcp.json?' } });
    expect(JSON.stringify(editor.asked[0]!.toolCall.content)).toContain('asks rein to start 1 MCP server(s)');
    const settled = (await readLog(sessionId)).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; observation: string });
    expect(settled.map((entry) => [entry.name, entry.status])).toEqual([['mcp__project__echo', 'ok'], ['mcp__editor__echo', 'ok']]);
    expect(settled[1]!.observation).toContain('from the editor');
  });
});
