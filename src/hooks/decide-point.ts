import type { DecisionPoint, HookDecided } from '../../models/hook.records.js';
import { digestOf } from '../../machines/typestate/digest.js';
import { blake3Hex } from '../util/blake3.js';
import type { FactDraft } from '../../models/envelope.js';
import type { HookKernel } from './hook-kernel.js';
import type { PointDecision } from './hook-types.js';

/** What a recorded decision is about: the call (effect, call id, tool), when it is about one. */
export interface DecisionSubject {
  effectId?: string;
  callId?: string;
  tool?: string;
}

/**
 * The digest of what the hooks were given: BLAKE3 (WASM, loaded by `createRein`) of its JSON, which rein builds with a
 * fixed key order; the synchronous JS digest of canonical JSON where the WASM hasher is not loaded.
 */
const inputDigestOf = (input: Record<string, unknown>): string => {
  try {
    return `b3:${blake3Hex(JSON.stringify(input))}`;
  } catch {
    return digestOf(input);
  }
};

/** The `hook.decided` fact for a decision (`original` is the tool input before an amend). */
export const hookDecidedFact = (point: DecisionPoint, subject: DecisionSubject, input: Record<string, unknown>, decided: PointDecision, at: number, original?: Record<string, unknown>): FactDraft => {
  const data: HookDecided = {
    point,
    ...(subject.effectId ? { effectId: subject.effectId } : {}),
    ...(subject.callId ? { callId: subject.callId } : {}),
    ...(subject.tool ? { tool: subject.tool } : {}),
    inputDigest: inputDigestOf(input),
    hooks: decided.rows,
    decision: decided.decision,
    ...(decided.reason ? { reason: decided.reason } : {}),
    ...(decided.decidedBy ? { decidedBy: decided.decidedBy } : {}),
    ...(decided.amended && original ? { original, amended: decided.amended } : {}),
    ...(decided.additionalContext ? { additionalContext: decided.additionalContext } : {}),
    ...(decided.candidates ? { candidates: decided.candidates } : {}),
    ...(decided.stopSession ? { stopSession: decided.stopSession } : {}),
  };
  return { type: 'hook.decided', data: data as unknown as Record<string, unknown>, at, ...(subject.callId ? { corr: subject.callId } : {}) };
};

/** A recorded decision read back as the kernel's decision (what resume uses instead of running the hooks again). */
export const decisionOfRecord = (record: HookDecided): PointDecision => ({
  decision: record.decision,
  ...(record.reason ? { reason: record.reason } : {}),
  ...(record.decidedBy ? { decidedBy: record.decidedBy } : {}),
  ...(record.amended ? { amended: record.amended } : {}),
  ...(record.additionalContext ? { additionalContext: record.additionalContext } : {}),
  ...(record.candidates ? { candidates: record.candidates } : {}),
  ...(record.stopSession ? { stopSession: record.stopSession } : {}),
  rows: record.hooks,
});

/**
 * The reason a durable record stops its session, when it is a `hook.decided` in which a hook asked to stop it
 * (`stopSession`; a command hook's `continue: false`). The session host cancels the session with it.
 */
export const sessionStopOf = (record: { type: string; data: unknown }): string | undefined => {
  if (record.type !== 'hook.decided') return undefined;
  const stop = (record.data as HookDecided).stopSession;
  return stop ? `stopped by hook ${stop.hookId}: ${stop.reason}` : undefined;
};

/**
 * Decide one point for one subject: reuse the recorded decision when the log has one (resume never runs a hook
 * again), else run the hooks and return the fact to record with the decision.
 */
export const decidePoint = async (options: {
  kernel: HookKernel;
  point: DecisionPoint;
  subject: DecisionSubject;
  input: Record<string, unknown>;
  signal: AbortSignal;
  now: () => number;
  recorded?: HookDecided;
  original?: Record<string, unknown>;
  amend?: (input: Record<string, unknown>, amended: Record<string, unknown>) => Record<string, unknown>;
}): Promise<{ decided: PointDecision; fact?: FactDraft }> => {
  if (options.recorded) return { decided: decisionOfRecord(options.recorded) };
  const decided = await options.kernel.decide(options.point, options.input, { signal: options.signal, ...(options.subject.tool ? { tool: options.subject.tool } : {}), ...(options.amend ? { amend: options.amend } : {}) });
  return { decided, fact: hookDecidedFact(options.point, options.subject, options.input, decided, options.now(), options.original) };
};
