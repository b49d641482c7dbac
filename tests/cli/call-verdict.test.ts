import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { callSummary } from '../../src/projections/call-summary.js';
import { callTally, callVerdict, plural, transcriptLine, transcriptSafe } from '../../src/cli/transcript.js';

const settled = (data: Record<string, unknown>, actor = 'root', seq = 1): RecordEnvelope => ({ stream: 's', seq, id: `r${seq}`, type: 'tool.settled', v: 1, at: 0, actor, data: { effectId: 'e', callId: 'c', name: 'bash', elapsedMs: 1, ...data } });

describe('how a settled call reads to a person', () => {
  it('a plain multi-line result reads as one line, with no literal \\n; control characters are still escaped', () => {
    const edit = settled({ name: 'edit', status: 'ok', observation: 'edited src/add.js: replaced one occurrence\n1 30036e31 | export const add\r\n\u001b[2K' });
    const line = transcriptLine(transcriptSafe(edit));
    expect(line).toContain('edited src/add.js: replaced one occurrence 1 30036e31 | export const add');
    expect(line).not.toContain('\\n');
    expect(line).toContain('\\x1b[2K');
    expect(line).not.toContain('\u001b');
  });

  it('a command left in the background has no outcome yet: not ✓, not a failure', () => {
    const background = { status: 'ok', observation: JSON.stringify({ command: 'npm run dev', background: true, pid: 42, success: true }) } as const;
    expect(callVerdict(background)).toBe('background');
    expect(transcriptLine(settled(background))).toMatch(/^#1 {4}… bash \(left running in the background: outcome unknown\): /);
  });

  it('the end of a background command, when it comes, is its own line: by itself or at its timeout', () => {
    const ended = (data: Record<string, unknown>): RecordEnvelope => ({ stream: 's', seq: 9, id: 'r9', type: 'command.ended', v: 1, at: 0, actor: 'root', data: { effectId: 'root:e1', callId: 'c1', timeoutMs: 1500, ...data } });
    expect(transcriptLine(ended({ ended: 'timeout', exitCode: null, signal: 'SIGTERM', timedOut: 'soft', durationMs: 1520 }))).toBe('#9    background command of c1 stopped at its timeout of 1500 ms (signal SIGTERM) after 1.5 s');
    expect(transcriptLine(ended({ ended: 'exited', exitCode: 2, durationMs: 400 }))).toBe('#9    background command of c1 exited (exit 2) after 0.4 s');
  });

  it('a call the sandbox refused (--sandbox required without bubblewrap) is denied, not failed', () => {
    expect(callVerdict({ status: 'error', errorCode: 'Denied', observation: 'Denied: the sandbox mode is "required" but bubblewrap is not available' })).toBe('denied');
    expect(callVerdict({ status: 'error', errorCode: 'Denied', observation: 'Denied: no', denial: { source: 'rule', reason: 'no' } })).toBe('denied');
  });

  it('a command is judged by its exit; the tally counts the root agent over the whole log', () => {
    const exit1 = { status: 'ok', observation: '{}', execution: { command: 'node --test', exitCode: 1, durationMs: 5 } } as const;
    expect(callVerdict(exit1)).toBe('failed');
    expect(callVerdict({ ...exit1, execution: { ...exit1.execution, exitCode: 0 } })).toBe('passed');
    const tally = callTally([settled(exit1, 'root', 1), settled({ status: 'error', errorCode: 'Denied', observation: 'Denied' }, 'root', 2), settled(exit1, 'root/task-1', 3), settled({ status: 'ok', observation: 'x' }, 'root', 4)]);
    expect(tally).toEqual({ passed: 1, failed: 1, denied: 1, background: 0 });
    expect([plural(1, 'tool call'), plural(0, 'tool call'), plural(7, 'turn')]).toEqual(['1 tool call', '0 tool calls', '7 turns']);
  });
});

describe('the history summary the model reads', () => {
  const result = (data: Record<string, unknown>) => ({ callId: 'c', name: 'bash', seq: 3, status: 'ok' as const, observation: '{}', ...data });
  it('says how a command ended, and names what a call searched for', () => {
    const call = { callId: 'c', name: 'bash', arguments: { command: 'node --test' } };
    expect(callSummary(call, result({ execution: { command: 'node --test', exitCode: 1, durationMs: 9 } }))).toBe('bash(node --test) exit 1');
    expect(callSummary(call, result({ execution: { command: 'node --test', exitCode: 0, durationMs: 9 } }))).toBe('bash(node --test) exit 0');
    expect(callSummary(call, result({ execution: { command: 'node --test', exitCode: null, timedOut: 'soft', durationMs: 9 } }))).toBe('bash(node --test) timed out (soft)');
    expect(callSummary(call, result({ observation: '{"background":true}' }))).toBe('bash(node --test) running in the background');
    expect(callSummary({ callId: 'g', name: 'glob', arguments: { pattern: '**/*.js' } }, result({ name: 'glob' }))).toBe('glob(**/*.js) ok');
    expect(callSummary({ callId: 'r', name: 'read', arguments: { path: 'a.txt' } }, result({ status: 'error', errorCode: 'NotFound' }))).toBe('read(a.txt) error NotFound');
    expect(callSummary(call, undefined)).toBe('bash(node --test) no result');
  });
});

describe('a failed call in the transcript', () => {
  it('names its code once: the observation that starts with it is not repeated', () => {
    const outside = { status: 'error', errorCode: 'Denied', name: 'read', observation: 'Denied: read: ../x is outside the workspace or protected' } as const;
    expect(transcriptLine(settled(outside))).toBe('#1    ✗ read Denied: read: ../x is outside the workspace or protected');
    const hook = { status: 'error', errorCode: 'Denied', name: 'bash', observation: 'Denied: enough (hook command:PreToolUse#1). Nothing was run.', denial: { source: 'hook', reason: 'enough' } } as const;
    expect(transcriptLine(settled(hook))).toBe('#1    ✗ bash Denied (denied by hook): enough (hook command:PreToolUse#1). Nothing was run.');
    const invalid = { status: 'error', errorCode: 'InvalidInput', name: 'mcp__everything__echo', observation: 'InvalidInput: mcp__everything__echo: message: expected string' } as const;
    expect(transcriptLine(settled(invalid))).toBe('#1    ✗ mcp__everything__echo InvalidInput: mcp__everything__echo: message: expected string');
    // An observation that does not start with the code keeps all of it.
    expect(transcriptLine(settled({ status: 'error', errorCode: 'NotFound', name: 'read', observation: 'no such file' }))).toBe('#1    ✗ read NotFound: no such file');
  });
});
