import { describe, expect, it } from 'vitest';
import { HookKernel } from '../../src/hooks/hook-kernel.js';
import type { HookRegistration, HookResult } from '../../src/hooks/hook-types.js';
import type { DecisionPoint } from '../../models/hook.records.js';

const signal = new AbortController().signal;

const hook = (id: string, point: DecisionPoint, run: (input: Record<string, unknown>, context: { signal: AbortSignal }) => unknown, extra: Partial<HookRegistration> = {}): HookRegistration => ({
  id,
  kind: 'plugin',
  pluginId: 'p',
  point,
  order: 0,
  timeoutMs: 200,
  failOpen: false,
  invoke: async (input, context) => ({ ok: true, result: (await run(input, context)) as HookResult | undefined }),
  ...extra,
});

const toolInput = { tool: { name: 'bash', input: { command: 'ls' } } };

describe('hook kernel', () => {
  it('runs hooks in ascending order (ties in registration order) and the first deny short-circuits', async () => {
    const ran: string[] = [];
    const kernel = new HookKernel([
      hook('late', 'preToolUse', () => void ran.push('late'), { order: 10 }),
      hook('a', 'preToolUse', () => (ran.push('a'), { decision: 'allow' })),
      hook('b', 'preToolUse', () => (ran.push('b'), { decision: 'deny', reason: 'no shell' })),
      hook('first', 'preToolUse', () => void ran.push('first'), { order: -5 }),
    ]);
    const decided = await kernel.decide('preToolUse', toolInput, { signal });
    expect(ran).toEqual(['first', 'a', 'b']);
    expect(decided).toMatchObject({ decision: 'deny', reason: 'no shell', decidedBy: 'b' });
    expect(decided.rows.map((row) => [row.hookId, row.verdict])).toEqual([['first', 'none'], ['a', 'allow'], ['b', 'deny']]);
  });

  it('fails closed at a blocking point: a timeout, a throw or an invalid result denies; failOpen reverses it and says so', async () => {
    const slow = hook('slow', 'preToolUse', (_input, context) => new Promise((resolve) => context.signal.addEventListener('abort', () => resolve({ decision: 'allow' }))), { timeoutMs: 30 });
    const timedOut = await new HookKernel([slow]).decide('preToolUse', toolInput, { signal });
    expect(timedOut.decision).toBe('deny');
    expect(timedOut.rows[0]!.error?.kind).toBe('timeout');
    const threw = await new HookKernel([hook('boom', 'preToolUse', () => { throw new Error('kaput'); })]).decide('preToolUse', toolInput, { signal });
    expect(threw).toMatchObject({ decision: 'deny', rows: [{ error: { kind: 'threw', message: 'kaput' } }] });
    const invalid = await new HookKernel([hook('odd', 'preToolUse', () => ({ decision: 'continue' }))]).decide('preToolUse', toolInput, { signal });
    expect(invalid).toMatchObject({ decision: 'deny', rows: [{ error: { kind: 'invalid' } }] });
    const open = await new HookKernel([{ ...slow, failOpen: true }]).decide('preToolUse', toolInput, { signal });
    expect(open.decision).toBe('none');
    expect(open.rows[0]).toMatchObject({ failOpen: true, error: { kind: 'timeout' } });
    const guard = await new HookKernel([hook('g', 'guardrail.input', () => { throw new Error('x'); })]).decide('guardrail.input', toolInput, { signal });
    expect(guard.decision).toBe('block');
  });

  it('fails open at an observer point: the error is recorded and later hooks still run', async () => {
    const kernel = new HookKernel([
      hook('broken', 'postToolUse', () => { throw new Error('telemetry down'); }),
      hook('notes', 'postToolUse', () => ({ additionalContext: 'lint found 2 warnings' })),
    ]);
    const decided = await kernel.decide('postToolUse', toolInput, { signal });
    expect(decided.decision).toBe('none');
    expect(decided.additionalContext).toBe('lint found 2 warnings');
    expect(decided.rows.map((row) => row.error?.kind ?? row.verdict)).toEqual(['threw', 'none']);
  });

  it('chains amends: a later hook sees the rewritten input, and the last amend wins', async () => {
    const seen: unknown[] = [];
    const kernel = new HookKernel([
      hook('quiet', 'preToolUse', (input) => (seen.push(input), { decision: 'amend', input: { command: 'ls -q' }, reason: 'quiet' })),
      hook('sort', 'preToolUse', (input) => (seen.push(input), { decision: 'amend', input: { command: 'ls -q | sort' }, reason: 'sorted' })),
    ]);
    const decided = await kernel.decide('preToolUse', toolInput, { signal, amend: (input, amended) => ({ ...input, tool: { ...(input.tool as object), input: amended } }) });
    expect(decided).toMatchObject({ decision: 'amend', amended: { command: 'ls -q | sort' }, decidedBy: 'sort' });
    expect(seen[1]).toEqual({ tool: { name: 'bash', input: { command: 'ls -q' } } });
  });

  it('selects hooks by tool matcher and reports the configured guardrail stages', () => {
    const kernel = new HookKernel([
      hook('edits', 'preToolUse', () => undefined, { matches: (tool) => tool === 'write' }),
      hook('out', 'guardrail.output', () => ({ verdict: 'pass' })),
      hook('in', 'guardrail.input', () => ({ verdict: 'pass' })),
    ]);
    expect(kernel.has('preToolUse', 'bash')).toBe(false);
    expect(kernel.has('preToolUse', 'write')).toBe(true);
    expect(kernel.guardrailStages()).toEqual(['input', 'output']);
    expect(new HookKernel().has('preToolUse')).toBe(false);
  });
});
