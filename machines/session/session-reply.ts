import type { SessionCaveat, SessionOutcome } from '../../models/session.records.js';
import { maxReportCorrections, maxStopContinuations } from '../session.contract.js';
import type { EmitRecordParams, SessionContext, SessionEvent } from '../session.contract.js';

/*
 * The session machine's reading of a reply and of how a session ends (machines/session.machine.ts): a reply cut at
 * the output limit, what a final reply leaves open, a child's report, and the `session.ended` record. Pure functions
 * of the machine's context and event; the machine's actions assign or emit what they return.
 */

/** A reply the output token limit cut before the model finished it (a cut tool call fails its arguments instead). */
export const isCut = (event: SessionEvent): boolean => event.type === 'model.responded' && event.stopReason === 'max_tokens' && event.toolCalls.length === 0;

/** What ending on this final reply leaves open: it was cut at the output limit, or a stop hook still objected. */
export const caveatsOf = (context: SessionContext, event: SessionEvent): SessionCaveat[] => {
  if (event.type !== 'model.responded') return [];
  const caveats: SessionCaveat[] = [];
  if (isCut(event)) {
    caveats.push({ kind: 'reply_cut', detail: `the last reply was cut at the output token limit (max_tokens)${context.tally.cutReplies > 1 ? ` after ${context.tally.cutReplies - 1} continuation(s)` : ''}: the answer is incomplete` });
  }
  if (event.continuation) {
    caveats.push({ kind: 'stop_hook_objected', detail: event.continuation.reason, ...(event.continuation.by ? { by: event.continuation.by } : {}) });
  }
  return caveats;
};

/** The caveats in words, for `session.ended.reason`: `the stop hook command:Stop#1 still objected after 3 continuations: tests still fail`. */
export const caveatText = (caveat: SessionCaveat): string =>
  caveat.kind === 'reply_cut' ? caveat.detail : `the stop hook ${caveat.by ?? ''}${caveat.by ? ' ' : ''}still objected after ${maxStopContinuations} continuations: ${caveat.detail}`;

/** The context update for a final reply's caveats (`noteCaveats`): them, and the reason they give when none is set. */
export const caveatsNoteOf = (context: SessionContext, event: SessionEvent): Partial<SessionContext> => {
  const caveats = caveatsOf(context, event);
  if (caveats.length === 0) return {};
  return { caveats, ...(context.endReason ? {} : { endReason: caveats.map(caveatText).join('; ') }) };
};

/** The findings a completion leaves standing: the last tool turn's, when it was blocked. */
export const unresolvedOf = (context: SessionContext) =>
  context.lastTurn?.status === 'blocked' && context.lastTurn.findings.length > 0 ? { turnId: context.lastTurn.turnId, findings: context.lastTurn.findings } : undefined;

/** What a child's `submit_report` result changes: an ok one is its report; a schema-invalid one a rejected attempt. */
export const reportNoteOf = (context: SessionContext, event: Extract<SessionEvent, { type: 'tool.settled' }>): { update: Partial<SessionContext>; rejected?: EmitRecordParams } | undefined => {
  if (!context.child) return undefined;
  if (event.status === 'ok' && event.value) return { update: { report: { callId: event.callId, value: event.value } } };
  if (event.status !== 'error' || (event.failedStage !== 'schema' && event.failedStage !== 'runtime-validation')) return undefined;
  const attempt = context.tally.contractFailures + 1;
  return {
    update: { tally: { ...context.tally, contractFailures: attempt } },
    rejected: { type: 'report.rejected', data: { reason: 'invalid', attempt, format: context.child.format, callId: event.callId, final: attempt > maxReportCorrections } },
  };
};

/** The `session.ended` record a final state emits: its status, reason, unresolved findings, caveats, output or output errors. */
export const endedRecordOf = (context: SessionContext, status: SessionOutcome): EmitRecordParams => {
  const unresolved = status === 'completed' ? unresolvedOf(context) : undefined;
  const caveats = status === 'completed' ? context.caveats : [];
  const answer = status === 'completed' ? context.tally.answer : undefined;
  const outputErrors = status === 'failed' ? context.tally.outputErrors : undefined;
  return { type: 'session.ended', data: { status, ...(context.endReason ? { reason: context.endReason } : {}), ...(unresolved ? { unresolved } : {}), ...(caveats.length > 0 ? { caveats } : {}), ...(answer ? { output: answer.value } : {}), ...(outputErrors ? { outputErrors } : {}) } };
};
