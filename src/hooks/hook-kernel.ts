import type { DecisionPoint, HookRow, HookVerdict } from '../../models/hook.records.js';
import { GuardrailResult, HookResult, blockingPoints, type HookRegistration, type InvokeOutcome, type PointDecision } from './hook-types.js';

/** The default time a hook may take (a command hook's default is 60 s, set where it is configured). */
export const defaultHookTimeoutMs = 1_000;

/** What each point accepts from a hook; anything else is an invalid result (a failure, fail closed where blocking). */
const accepted: Record<DecisionPoint, ReadonlySet<string>> = {
  preToolUse: new Set(['allow', 'deny', 'ask', 'amend']),
  postToolUse: new Set(['allow']),
  userPromptSubmit: new Set(['allow', 'block']),
  stop: new Set(['continue', 'stop', 'allow']),
  sessionStart: new Set([]),
  sessionEnd: new Set([]),
  contextProject: new Set([]),
  preCompact: new Set([]),
  subagentStart: new Set([]),
  subagentStop: new Set([]),
  'guardrail.pre_flight': new Set(['pass', 'block']),
  'guardrail.input': new Set(['pass', 'block']),
  'guardrail.output': new Set(['pass', 'block']),
};

/** What a hook that stops the session decides at a gate: the call does not run, the prompt never reaches the model. */
const stopVerdict: Partial<Record<DecisionPoint, HookVerdict>> = { preToolUse: 'deny', userPromptSubmit: 'block', stop: 'stop' };

const isGuardrail = (point: DecisionPoint): boolean => point.startsWith('guardrail.');

const aborted = (message: string): InvokeOutcome => ({ ok: false, error: { kind: 'aborted', message } });

/**
 * Run one hook with its own abort signal, fired at its timeout or when the call is cancelled. A hook that answers
 * synchronously is done at once (no timer, no controller unless it read its signal); one that answers later races its
 * timeout. (One controller and a forwarding listener per invocation: `AbortSignal.any` costs several times more.)
 */
const invokeWithin = async (hook: HookRegistration, input: Record<string, unknown>, signal: AbortSignal): Promise<InvokeOutcome> => {
  if (signal.aborted) return aborted('the call was cancelled before the hook ran');
  let controller: AbortController | undefined;
  const context = {
    get signal(): AbortSignal {
      return (controller ??= new AbortController()).signal;
    },
  };
  let answer: InvokeOutcome | Promise<InvokeOutcome>;
  try {
    answer = hook.invoke(input, context);
  } catch (error) {
    return { ok: false, error: { kind: 'threw', message: error instanceof Error ? error.message : String(error) } };
  }
  if (!(answer instanceof Promise)) return answer;
  const own = (controller ??= new AbortController());
  const forward = () => own.abort();
  signal.addEventListener('abort', forward, { once: true });
  let timedOut = false;
  let stop!: (outcome: InvokeOutcome) => void;
  const stopped = new Promise<InvokeOutcome>((resolve) => (stop = resolve));
  own.signal.addEventListener('abort', () => stop(timedOut ? { ok: false, error: { kind: 'timeout', message: `did not answer within ${hook.timeoutMs} ms` } } : aborted('the call was cancelled while the hook ran')), { once: true });
  const handle = setTimeout(() => {
    timedOut = true;
    own.abort();
  }, hook.timeoutMs);
  try {
    const running = answer.catch((error: unknown): InvokeOutcome => ({ ok: false, error: { kind: 'threw', message: error instanceof Error ? error.message : String(error) } }));
    return await Promise.race([running, stopped]);
  } finally {
    clearTimeout(handle);
    signal.removeEventListener('abort', forward);
  }
};

const plainKeys: ReadonlySet<string> = new Set(['decision', 'reason', 'additionalContext', 'verdict', 'stopSession']);

/** The common shape (only short string fields, no input or candidates) checked without zod; anything else goes to zod. */
const plainResult = (value: object): (HookResult & { verdict?: 'pass' | 'block' }) | undefined => {
  for (const key in value) {
    if (!plainKeys.has(key)) return undefined;
    const field = (value as Record<string, unknown>)[key];
    if (typeof field !== 'string' || field.length > 20_000) return undefined;
  }
  return value as HookResult & { verdict?: 'pass' | 'block' };
};

/** Check one result against what its point accepts; an error message when it does not fit. */
const validate = (point: DecisionPoint, value: unknown): { ok: true; result: HookResult & { verdict?: 'pass' | 'block' } } | { ok: false; message: string } => {
  if (value === undefined || value === null) return { ok: true, result: {} };
  let result = typeof value === 'object' && !Array.isArray(value) ? plainResult(value) : undefined;
  if (result && (isGuardrail(point) ? 'decision' in result || 'additionalContext' in result : 'verdict' in result)) result = undefined;
  if (!result) {
    const parsed = isGuardrail(point) ? GuardrailResult.safeParse(value) : HookResult.safeParse(value);
    if (!parsed.success) return { ok: false, message: `invalid result: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}` };
    result = parsed.data as HookResult & { verdict?: 'pass' | 'block' };
  }
  const decision = isGuardrail(point) ? result.verdict : result.decision;
  if (decision !== undefined && !accepted[point].has(decision)) return { ok: false, message: `decision ${decision} is not one ${point} takes` };
  if (isGuardrail(point) && decision === undefined) return { ok: false, message: 'a guardrail must return pass or block' };
  if (decision === 'amend' && result.input === undefined) return { ok: false, message: 'amend without the rewritten input' };
  return { ok: true, result };
};

/**
 * The hook kernel: the registered hooks and guardrails by point, in a deterministic order (ascending `order`, then
 * registration order), each run with its timeout. At a blocking point (`preToolUse`, every guardrail stage) a hook
 * that times out, throws, returns an invalid result or (a command) exits with anything but 0 or 2 **denies** —
 * unless it is configured `failOpen`, which is recorded on its row. Elsewhere a failing hook is recorded and the
 * flow goes on. The first deny, ask, block, stop (at `stop`, also continue) or `stopSession` short-circuits the rest;
 * amends chain (each later hook sees the rewritten input). The kernel never throws for a hook's failure.
 */
export class HookKernel {
  private readonly byPoint = new Map<DecisionPoint, HookRegistration[]>();
  readonly size: number;

  constructor(registrations: readonly HookRegistration[] = []) {
    const indexed = registrations.map((hook, index) => ({ hook, index }));
    indexed.sort((left, right) => left.hook.order - right.hook.order || left.index - right.index);
    for (const { hook } of indexed) {
      const list = this.byPoint.get(hook.point) ?? [];
      list.push(hook);
      this.byPoint.set(hook.point, list);
    }
    this.size = registrations.length;
  }

  /** The hooks that would run at `point` (for a tool point, those matching `tool`), in order. */
  hooksFor(point: DecisionPoint, tool?: string): readonly HookRegistration[] {
    const list = this.byPoint.get(point);
    if (!list) return [];
    return tool === undefined ? list : list.filter((hook) => !hook.matches || hook.matches(tool));
  }

  /** Whether any hook would run at `point` (cheap: the pipeline asks this before building an input). */
  has(point: DecisionPoint, tool?: string): boolean {
    const list = this.byPoint.get(point);
    if (!list) return false;
    return tool === undefined ? list.length > 0 : list.some((hook) => !hook.matches || hook.matches(tool));
  }

  /** The guardrail stages that have at least one guardrail, in stage order. */
  guardrailStages(): Array<'pre_flight' | 'input' | 'output'> {
    return (['pre_flight', 'input', 'output'] as const).filter((stage) => this.has(`guardrail.${stage}`));
  }

  /** Every registration, in kernel order, point by point. */
  list(): HookRegistration[] {
    return [...this.byPoint.values()].flat();
  }

  /**
   * Run the hooks of `point` for one subject and combine their decisions. `input` is what each hook receives; at
   * `preToolUse` an amend replaces `input.tool.input` (or, for command hooks, what they are given) for the hooks after it.
   */
  async decide(point: DecisionPoint, input: Record<string, unknown>, options: { signal: AbortSignal; tool?: string; amend?: (input: Record<string, unknown>, amended: Record<string, unknown>) => Record<string, unknown> }): Promise<PointDecision> {
    const hooks = this.hooksFor(point, options.tool);
    const rows: HookRow[] = [];
    const blocking = blockingPoints.has(point);
    let current = input;
    let amended: Record<string, unknown> | undefined;
    let decided: { decision: HookVerdict; reason?: string; decidedBy: string } | undefined;
    const contexts: string[] = [];
    const candidates: NonNullable<PointDecision['candidates']> = [];
    let allowed = false;
    let stopSession: PointDecision['stopSession'];
    for (const hook of hooks) {
      const started = performance.now();
      const outcome = await invokeWithin(hook, current, options.signal);
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      const base = { hookId: hook.id, kind: hook.kind, ...(hook.pluginId ? { pluginId: hook.pluginId } : {}), durationMs };
      const checked = outcome.ok ? validate(point, outcome.result) : undefined;
      const error = !outcome.ok ? outcome.error : checked && !checked.ok ? { kind: 'invalid' as const, message: checked.message } : undefined;
      if (error) {
        if (blocking && !hook.failOpen) {
          const verdict: HookVerdict = isGuardrail(point) ? 'block' : 'deny';
          const reason = `${isGuardrail(point) ? 'guardrail' : 'hook'} ${hook.id} failed (${error.kind}: ${error.message}); failing closed`;
          rows.push({ ...base, verdict, reason, error });
          decided = { decision: verdict, reason, decidedBy: hook.id };
          break;
        }
        rows.push({ ...base, verdict: 'none', error, ...(blocking ? { failOpen: true as const } : {}) });
        continue;
      }
      const result = (checked as { ok: true; result: HookResult & { verdict?: 'pass' | 'block' } }).result;
      const halt = isGuardrail(point) ? undefined : result.stopSession;
      // A stop wins over any decision: the call is denied, the prompt blocked, the final reply stays final.
      const verdict: HookVerdict = halt !== undefined ? (stopVerdict[point] ?? result.decision ?? 'none') : ((isGuardrail(point) ? result.verdict : result.decision) ?? 'none');
      const reason = halt !== undefined && verdict !== (result.decision ?? 'none') ? `session stopped by hook ${hook.id}: ${halt}` : result.reason;
      rows.push({ ...base, verdict, ...(reason ? { reason } : {}), ...(result.additionalContext ? { additionalContext: result.additionalContext } : {}), ...(halt !== undefined ? { stopSession: halt } : {}) });
      if (result.additionalContext) contexts.push(result.additionalContext);
      for (const candidate of result.candidates ?? []) candidates.push({ id: candidate.id, hookId: hook.id, priority: candidate.priority ?? 0, content: candidate.content });
      if (halt !== undefined) {
        stopSession = { hookId: hook.id, reason: halt };
        if (verdict === 'deny' || verdict === 'block' || verdict === 'stop' || verdict === 'ask') decided = { decision: verdict, reason: reason ?? `session stopped by hook ${hook.id}: ${halt}`, decidedBy: hook.id };
        break;
      }
      if (verdict === 'deny' || verdict === 'ask' || verdict === 'block' || verdict === 'continue' || verdict === 'stop') {
        decided = { decision: verdict, reason: reason ?? (verdict === 'ask' ? `hook ${hook.id} asks for a person's approval` : `${verdict === 'continue' ? 'continue' : verdict === 'stop' ? 'stop' : 'denied'} by hook ${hook.id}`), decidedBy: hook.id };
        if (verdict !== 'continue' || point === 'stop') break;
      }
      if (verdict === 'amend' && result.input) {
        amended = result.input;
        current = options.amend ? options.amend(current, result.input) : current;
        decided = { decision: 'amend', reason: reason ?? `input amended by hook ${hook.id}`, decidedBy: hook.id };
      }
      if (verdict === 'allow' || verdict === 'pass') allowed = true;
    }
    const decision: HookVerdict = decided?.decision ?? (isGuardrail(point) ? (hooks.length > 0 ? 'pass' : 'none') : allowed ? 'allow' : 'none');
    return {
      decision,
      ...(decided?.reason ? { reason: decided.reason } : {}),
      ...(decided ? { decidedBy: decided.decidedBy } : {}),
      ...(amended && decision === 'amend' ? { amended } : {}),
      ...(contexts.length > 0 ? { additionalContext: contexts.join('\n\n') } : {}),
      ...(candidates.length > 0 ? { candidates } : {}),
      ...(stopSession ? { stopSession } : {}),
      rows,
    };
  }
}
