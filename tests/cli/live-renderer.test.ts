import { PassThrough } from 'node:stream';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { LiveRenderer } from '../../src/cli/live-renderer.js';
import type { LiveEvent } from '../../models/live-events.js';

const record = (type: string, data: Record<string, unknown>, seq = 1): RecordEnvelope => ({ stream: 's', seq, id: `r${seq}`, type, v: 1, at: 0, actor: 'root', data });

const render = async (options: { tty: boolean; colour?: boolean }) => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const live$ = new Subject<LiveEvent>();
  const records$ = new Subject<RecordEnvelope>();
  const renderer = new LiveRenderer(out, options);
  const subscription = renderer.attach({ live$, records$ });
  records$.next(record('effect.requested', { effectId: 'root:e1', kind: 'callModel', args: { turn: 1 } }, 0));
  live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e1', kind: 'callModel', label: 'callModel' });
  await new Promise((resolve) => setTimeout(resolve, 250));
  live$.next({ type: 'model.retrying', actor: 'root', effectId: 'root:e1', attempt: 1, code: 'overloaded', message: 'busy', delayMs: 1500 });
  live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e1', channel: 'text', text: 'Reading it.' });
  live$.next({ type: 'model.intent', actor: 'root', effectId: 'root:e1', index: 0, name: 'read', argumentsLength: 12 });
  live$.next({ type: 'effect.finished', actor: 'root', effectId: 'root:e1', kind: 'callModel', label: 'callModel', ok: true, durationMs: 5 });
  records$.next(record('effect.requested', { effectId: 'root:e2', kind: 'executeTool', args: { callId: 'root:e1.0', name: 'read', arguments: { path: 'a.txt' } } }));
  live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e2', kind: 'executeTool', label: 'read' });
  records$.next(record('tool.settled', { effectId: 'root:e2', callId: 'root:e1.0', name: 'read', status: 'error', errorCode: 'NotFound', observation: 'x', elapsedMs: 1 }, 2));
  // A command that ran and exited non-zero: the call settled ok, the run failed.
  records$.next(record('effect.requested', { effectId: 'root:e3', kind: 'executeTool', args: { callId: 'root:e1.1', name: 'bash', arguments: { command: 'node --test' } } }, 3));
  records$.next(record('tool.settled', { effectId: 'root:e3', callId: 'root:e1.1', name: 'bash', status: 'ok', observation: '{}', execution: { command: 'node --test', exitCode: 1, durationMs: 812 }, elapsedMs: 1 }, 4));
  records$.next(record('effect.requested', { effectId: 'root:e4', kind: 'executeTool', args: { callId: 'root:e1.2', name: 'write', arguments: { path: 'b.txt' } } }, 5));
  records$.next(record('tool.settled', { effectId: 'root:e4', callId: 'root:e1.2', name: 'write', status: 'error', errorCode: 'Denied', observation: 'Denied: no', failedStage: 'permission', denial: { source: 'rule', rule: 'deny write', reason: 'no' }, elapsedMs: 1 }, 6));
  out.write(renderer.summary({ sessionId: 's-1', status: 'completed', head: 9, usage: { turns: 2, toolCalls: 3, inputTokens: 10, outputTokens: 5, elapsedMs: 3 } }, Date.now()));
  subscription.unsubscribe();
  return text;
};

describe('the live renderer', () => {
  it('on a TTY: animates a status line, erases it before output, and colours marks', async () => {
    const text = await render({ tty: true, colour: true });
    expect(text).toMatch(/\r\u001b\[2K.*⠙ thinking · 0\.\d s/);
    expect(text).toContain('preparing read (12 chars)');
    expect(text).toContain('\u001b[31m✗\u001b[0m read a.txt');
    expect(text).toContain('↻ overloaded: retrying in 1.5 s (attempt 2)');
    expect(text).toContain('Reading it.\n');
    expect(text).toContain('rein run --provider recorded --from s-1');
  });

  it('elsewhere: plain lines only, no control sequences at all', async () => {
    const text = await render({ tty: false });
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\r');
    expect(text).toContain('  ✗ read a.txt NotFound');
    expect(text).toContain('  ↻ overloaded: retrying in 1.5 s (attempt 2)\nReading it.\n');
    expect(text).toContain('  ✗ bash node --test (exit 1, 812 ms)\n');
    expect(text).toContain('  ✗ write b.txt Denied\n');
    expect(text).toMatch(/completed\n2 turns · 3 tool calls \(2 failed, 1 denied\) · 15 tokens/);
  });

  it('answers of consecutive turns without tool calls each start on a line of their own', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const live$ = new Subject<LiveEvent>();
    const records$ = new Subject<RecordEnvelope>();
    const renderer = new LiveRenderer(out, { tty: false });
    const subscription = renderer.attach({ live$, records$ });
    for (const turn of [1, 2, 3]) {
      records$.next({ ...record('effect.requested', { effectId: `root:e${turn}`, kind: 'callModel', args: { turn } }, turn * 2), cause: `step${turn}` });
      live$.next({ type: 'effect.started', actor: 'root', effectId: `root:e${turn}`, kind: 'callModel', label: 'callModel' });
      live$.next({ type: 'model.delta', actor: 'root', effectId: `root:e${turn}`, channel: 'text', text: `Done ${turn}.` });
      live$.next({ type: 'effect.finished', actor: 'root', effectId: `root:e${turn}`, kind: 'callModel', label: 'callModel', ok: true, durationMs: 5 });
      records$.next({ ...record('model.responded', { turn }, turn * 2 + 1), cause: `reply${turn}` });
    }
    subscription.unsubscribe();
    expect(text).toBe('Done 1.\nDone 2.\nDone 3.');
  });

  it('on a TTY with colour off (NO_COLOR): the spinner stays, colours go', async () => {
    const text = await render({ tty: true, colour: false });
    expect(text).toContain('thinking');
    expect(text).not.toMatch(/\u001b\[(2|31|32|33)m/);
  });

  it('prints in log order: the next turn streams before the last tool result is acknowledged, and still shows after it', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const live$ = new Subject<LiveEvent>();
    const records$ = new Subject<RecordEnvelope>();
    const renderer = new LiveRenderer(out, { tty: false });
    const subscription = renderer.attach({ live$, records$ });
    records$.next(record('effect.requested', { effectId: 'root:e2', kind: 'executeTool', args: { callId: 'root:e1.0', name: 'bash', arguments: { command: 'node --test' } } }, 1));
    // The settling batch (tool.settled, then the next model call's request) is written; the model call starts and
    // streams while that batch waits for its fsync.
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e3', kind: 'callModel', label: 'callModel' });
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e3', channel: 'text', text: 'Fixed. The tests pass now.' });
    expect(text).toBe('');
    records$.next(record('tool.settled', { effectId: 'root:e2', callId: 'root:e1.0', name: 'bash', status: 'ok', observation: '{}', execution: { command: 'node --test', exitCode: 0, durationMs: 156 }, elapsedMs: 1 }, 2));
    records$.next(record('effect.requested', { effectId: 'root:e3', kind: 'callModel', args: { turn: 2 } }, 3));
    // Later deltas of a shown request print at once.
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e3', channel: 'text', text: '\n' });
    // A request this renderer never sees (attached late) does not lose its text: the summary shows it first.
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e9', channel: 'text', text: 'late text\n' });
    out.write(renderer.summary({ sessionId: 's-1', status: 'completed', head: 3, usage: { turns: 2, toolCalls: 1, inputTokens: 1, outputTokens: 1, elapsedMs: 3 } }, Date.now()));
    subscription.unsubscribe();
    expect(text.indexOf('  ✓ bash node --test (exit 0, ')).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('  ✓ bash node --test')).toBeLessThan(text.indexOf('Fixed. The tests pass now.\n'));
    expect(text.indexOf('Fixed. The tests pass now.')).toBeLessThan(text.indexOf('late text'));
    expect(text.indexOf('late text')).toBeLessThan(text.indexOf('completed'));
  });

  it('prints in log order with delegation: a join written in the same batch after the next model call\'s request shows before that turn\'s text', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const live$ = new Subject<LiveEvent>();
    const records$ = new Subject<RecordEnvelope>();
    const renderer = new LiveRenderer(out, { tty: false });
    const subscription = renderer.attach({ live$, records$ });
    // The last child's step: the parent's turn closes, the next model call is requested, then the delegation actor's
    // records follow in the same batch. The model call streams while the batch waits for its fsync.
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e3', kind: 'callModel', label: 'callModel' });
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e3', channel: 'text', text: 'Done.' });
    const delegation = (type: string, data: Record<string, unknown>, seq: number): RecordEnvelope => ({ ...record(type, data, seq), actor: 'root/delegation-2' });
    records$.next(record('effect.requested', { effectId: 'root:e3', kind: 'callModel', args: { turn: 2 } }, 107));
    records$.next(delegation('delegation.completed', { callId: 'root:e1.0', taskId: 'map', child: 'root/delegation-2/map', reportStatus: 'completed' }, 109));
    records$.next(delegation('delegation.joined', { callId: 'root:e1.0', parent: 'root', policy: 'all', outcome: 'satisfied', children: [{}, {}] }, 110));
    await Promise.resolve();
    // Once the batch is out, the request's live events print, and later ones at once.
    expect(text).toContain('Done.');
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e3', channel: 'text', text: '\n' });
    subscription.unsubscribe();
    const completed = text.indexOf('↳ task map completed, report completed');
    const joined = text.indexOf('✓ delegate_task joined (all): satisfied, 2 task(s)');
    expect(completed).toBeGreaterThanOrEqual(0);
    expect(completed).toBeLessThan(joined);
    expect(joined).toBeLessThan(text.indexOf('Done.\n'));
  });

  it('prints in log order when one commit publishes several steps: a turn\'s text shows before the next step\'s approval question', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const live$ = new Subject<LiveEvent>();
    const records$ = new Subject<RecordEnvelope>();
    const renderer = new LiveRenderer(out, { tty: false });
    const subscription = renderer.attach({ live$, records$ });
    const caused = (envelope: RecordEnvelope, cause: string): RecordEnvelope => ({ ...envelope, cause });
    // The model call streams while its step waits for the commit; the reply and the tool's approval question are
    // written meanwhile, and one commit acknowledges all three steps in one synchronous publication.
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e3', kind: 'callModel', label: 'callModel' });
    live$.next({ type: 'model.delta', actor: 'root', effectId: 'root:e3', channel: 'text', text: 'Running the tests again.' });
    records$.next(caused(record('tool.settled', { effectId: 'root:e2', callId: 'root:e1.0', name: 'edit', status: 'ok', observation: 'ok', elapsedMs: 1 }, 20), 'r-19'));
    records$.next(caused(record('effect.requested', { effectId: 'root:e3', kind: 'callModel', args: { turn: 3 } }, 21), 'r-20'));
    records$.next(caused(record('model.responded', { effectId: 'root:e3', turn: 3, text: 'Running the tests again.', toolCalls: [], stopReason: 'tool_use', elapsedMs: 1 }, 22), 'r-21'));
    records$.next(caused(record('approval.requested', { effectId: 'root:e4', summary: 'run the test suite: bash node --test', reason: 'ask' }, 23), 'r-22'));
    await Promise.resolve();
    subscription.unsubscribe();
    expect(text.indexOf('Running the tests again.')).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('Running the tests again.')).toBeLessThan(text.indexOf('? run the test suite'));
  });

  it('shows the recorded durations: a command\'s execution time, another call\'s tool.started → tool.settled, none for a call that never ran', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const live$ = new Subject<LiveEvent>();
    const records$ = new Subject<RecordEnvelope>();
    const renderer = new LiveRenderer(out, { tty: false });
    const subscription = renderer.attach({ live$, records$ });
    const at = (envelope: RecordEnvelope, time: number): RecordEnvelope => ({ ...envelope, at: time });
    records$.next(at(record('effect.requested', { effectId: 'root:e2', kind: 'executeTool', args: { callId: 'root:e1.0', name: 'bash', arguments: { command: 'node --test' } } }, 1), 1000));
    records$.next(at(record('effect.requested', { effectId: 'root:e3', kind: 'executeTool', args: { callId: 'root:e1.1', name: 'read', arguments: { path: 'a.txt' } } }, 2), 1000));
    records$.next(at(record('effect.requested', { effectId: 'root:e4', kind: 'executeTool', args: { callId: 'root:e1.2', name: 'write', arguments: { path: 'b.txt' } } }, 3), 1000));
    await Promise.resolve();
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e2', kind: 'executeTool', label: 'bash' });
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e3', kind: 'executeTool', label: 'read' });
    live$.next({ type: 'effect.started', actor: 'root', effectId: 'root:e4', kind: 'executeTool', label: 'write' });
    // The results reach this process later than they happened (a batch waiting for its fsync, a busy machine).
    await new Promise((resolve) => setTimeout(resolve, 60));
    records$.next(at(record('tool.started', { effectId: 'root:e2', callId: 'root:e1.0', name: 'bash' }, 4), 1001));
    records$.next(at(record('tool.settled', { effectId: 'root:e2', callId: 'root:e1.0', name: 'bash', status: 'ok', observation: '{}', execution: { command: 'node --test', exitCode: 1, durationMs: 7.4 }, elapsedMs: 9 }, 5), 1009));
    records$.next(at(record('tool.started', { effectId: 'root:e3', callId: 'root:e1.1', name: 'read' }, 6), 1010));
    records$.next(at(record('tool.settled', { effectId: 'root:e3', callId: 'root:e1.1', name: 'read', status: 'ok', observation: 'x', elapsedMs: 22 }, 7), 1022));
    records$.next(at(record('tool.settled', { effectId: 'root:e4', callId: 'root:e1.2', name: 'write', status: 'error', errorCode: 'Denied', observation: 'Denied: no', failedStage: 'permission', denial: { source: 'rule', reason: 'no' }, elapsedMs: 23 }, 8), 1023));
    subscription.unsubscribe();
    expect(text).toContain('  ✗ bash node --test (exit 1, 7 ms)\n');
    expect(text).toContain('  ✓ read a.txt (12 ms)\n');
    expect(text).toContain('  ✗ write b.txt Denied\n');
  });

  it('an MCP tool list announced again unchanged prints nothing; a changed one says so (D14)', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const records$ = new Subject<RecordEnvelope>();
    const subscription = new LiveRenderer(out, { tty: false }).attach({ live$: new Subject<LiveEvent>(), records$ });
    const tool = (name: string) => ({ server: 'everything', tool: name, name: `mcp__everything__${name}`, description: name, inputSchema: { type: 'object' } });
    records$.next(record('mcp.connected', { server: 'everything', resources: false, listChanged: true, tools: [tool('echo'), tool('add')] }, 1));
    records$.next(record('mcp.tools-listed', { server: 'everything', reason: 'list_changed', tools: [tool('echo'), tool('add')], problems: [] }, 2));
    expect(text).toContain('mcp everything ready: 2 tools');
    expect(text).not.toContain('tools changed');
    records$.next(record('mcp.tools-listed', { server: 'everything', reason: 'list_changed', tools: [tool('echo')], problems: [] }, 3));
    expect(text).toContain('mcp everything tools changed: 1 tools');
    subscription.unsubscribe();
  });

  it('shows the model\'s plan as a compact checklist when it changes, and not again when it does not', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const records$ = new Subject<RecordEnvelope>();
    const subscription = new LiveRenderer(out, { tty: false }).attach({ live$: new Subject<LiveEvent>(), records$ });
    const plan = [{ step: 'read the test', status: 'completed' }, { step: 'fix it', status: 'in_progress' }, { step: 'run the tests', status: 'pending' }];
    records$.next(record('plan.updated', { effectId: 'root:e2', callId: 'root:e1.0', plan, explanation: 'found it' }, 2));
    records$.next(record('plan.updated', { effectId: 'root:e4', callId: 'root:e3.0', plan }, 3));
    subscription.unsubscribe();
    expect(text).toBe('  ☰ plan (1 of 3 done) — found it\n    [x] read the test\n    [>] fix it\n    [ ] run the tests\n');
  });
});
