import { newest, toArray } from '../projections/persistent-list.js';
import { outcomeOfTraceView } from './session-outcome.js';
import type { TraceView } from '../projections/trace.view.js';
import { backgroundEndsOf, claimsSuccess, ContextReader, lastChange, turnsOf } from './trace-evidence.js';
import { caveatRules, executionRules, failClosedRules, projectionRules, repetitionRules, truncationRules, verificationRules, type RuleInput } from './trace-rules.js';
import { boundaryPrecedence, type ReadText, type TraceFinding, type TraceOutcome, type TraceReport } from './trace-types.js';

/**
 * The trace outcome alone, from the view (no blob is read; the same as `analyzeTrace(view).outcome`): what a listing
 * shows for each session without running the whole analysis.
 */
export const traceOutcomeOf = (view: TraceView): TraceOutcome => outcomeOfTraceView(view);

const rank = (finding: TraceFinding): number => (finding.category === 'unknown_or_mixed' ? boundaryPrecedence.length : boundaryPrecedence.indexOf(finding.boundary));

/**
 * Analyse a trace view with deterministic rules (no model, no tools, no writes; blobs are only read): derive the
 * outcome (only a passing verification after the last change, with no fail-closed finding left standing, is
 * `succeeded`; a completed session without one is `unverified`), then check verification, observation fidelity,
 * context projection, repeated failed calls, execution, permission and findings a completion left standing. The model is blamed only when a recorded model input proves the key fact reached it;
 * without that evidence the finding is `unknown_or_mixed`. The primary finding is the earliest broken harness
 * boundary along the chain, the model's judgement last.
 */
export const analyzeTrace = async (view: TraceView, readText: ReadText): Promise<TraceReport> => {
  const turns = turnsOf(view);
  const lastVerification = newest(view.verifications, 1)[0];
  const change = lastChange(turns, backgroundEndsOf(view));
  const lastMutation = change.seq;
  const completed = view.ended?.status === 'completed';
  const finalTurn = completed ? [...turns].reverse().find((turn) => turn.actor === 'root' && turn.response && turn.response.toolCalls === 0) : undefined;
  const final = finalTurn?.response ? { turn: finalTurn, claims: claimsSuccess(finalTurn.response.text) } : undefined;
  const input: RuleInput = { turns, reader: new ContextReader(readText), readText, lastMutation, ...(change.background ? { backgroundChange: change.background } : {}), completed, ...(final ? { final } : {}), ...(lastVerification ? { lastVerification } : {}), ...(view.ended ? { ended: view.ended } : {}) };
  const found = (await Promise.all([verificationRules(input), truncationRules(input), projectionRules(input), repetitionRules(input), executionRules(input), failClosedRules(input), caveatRules(input)])).flat();
  const seen = new Set<string>();
  const findings = found
    .filter((entry) => {
      const key = `${entry.type}|${entry.seq}|${entry.fact ?? ''}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((left, right) => rank(left) - rank(right) || left.seq - right.seq);
  const unknowns = turns.filter((turn) => turn.contexts.length === 0 && (turn.response || turn.failure)).map((turn) => `turn ${turn.turn} of ${turn.actor} (#${turn.requested.seq}) has no recorded context snapshot`);
  const backgroundEnds = toArray(view.notes)
    .filter((note) => note.type === 'command.ended')
    .map((note) => ({ seq: note.seq, id: note.id, text: note.text }))
    .sort((left, right) => left.seq - right.seq);
  if (view.unlinked > 0) unknowns.push(`${view.unlinked} records could not be linked to a turn or call by cause / corr`);
  return {
    sessionId: view.sessionId ?? '',
    task: view.task ?? '',
    outcome: outcomeOfTraceView(view),
    ...(view.ended ? { ended: view.ended } : {}),
    claimedSuccess: final?.claims ?? false,
    ...(finalTurn?.response ? { finalMessage: { seq: finalTurn.response.seq, id: finalTurn.response.id, text: finalTurn.response.text } } : {}),
    findings,
    ...(findings[0] ? { primary: findings[0] } : {}),
    turns,
    ...(backgroundEnds.length > 0 ? { backgroundEnds } : {}),
    unknowns,
    evalCandidate: findings.length > 0,
  };
};
