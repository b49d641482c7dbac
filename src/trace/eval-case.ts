import { canonicalEqual } from '../host/canonical-equal.js';
import { normalizeSpace } from '../projections/key-lines.js';
import { newest } from '../projections/persistent-list.js';
import type { TraceView } from '../projections/trace.view.js';
import { analyzeTrace } from './trace-analyzer.js';
import { backgroundEndsOf, ContextReader, lastMutationSeq, turnsOf } from './trace-evidence.js';
import type { ReadText, TraceReport } from './trace-types.js';

/** A check on the trajectory of a session (its steps), not only on its final answer. */
export type EvalAssertion =
  | { type: 'final_success_requires_verification_passed' }
  | { type: 'verification_after_last_change' }
  | { type: 'context_contains_fact'; fact: string }
  | { type: 'no_repeated_call_after_failure'; name: string; arguments: Record<string, unknown> }
  | { type: 'no_tool_execution_failure' };

/** An eval case exported from a traced session: the goal, the steps the agent took, and the assertions. */
export interface EvalCase {
  name: string;
  goal: string;
  source: { sessionId: string; outcome: string; primary?: string };
  steps: Array<{ turn: number; text: string; calls: Array<{ name: string; arguments: Record<string, unknown>; status?: string; errorCode?: string }> }>;
  assertions: EvalAssertion[];
}

/** The result of checking one session against an eval case. */
export interface EvalResult {
  passed: boolean;
  results: Array<{ assertion: EvalAssertion; passed: boolean; detail: string }>;
}

const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '').slice(0, 48) || 'session';

/**
 * Turn a trace report into an eval case: always "success requires a passing verification", plus one assertion per
 * finding (the missing key fact must reach the context, the failed call must not be repeated unchanged, a
 * verification must follow the last change, tools must not crash).
 */
export const exportEvalCase = (report: TraceReport): EvalCase => {
  const assertions: EvalAssertion[] = [{ type: 'final_success_requires_verification_passed' }];
  const add = (assertion: EvalAssertion) => {
    if (!assertions.some((existing) => canonicalEqual(existing, assertion))) assertions.push(assertion);
  };
  for (const finding of report.findings) {
    if (finding.type === 'missing_verification' || finding.type === 'verification_stale') add({ type: 'verification_after_last_change' });
    if (finding.call && (finding.type === 'denial_ignored' || finding.type === 'repeated_failed_call' || finding.category === 'context_missing')) add({ type: 'no_repeated_call_after_failure', name: finding.call.name, arguments: finding.call.arguments });
    if (finding.fact && finding.category === 'context_missing') add({ type: 'context_contains_fact', fact: finding.fact });
    if (finding.type === 'tool_execution_error') add({ type: 'no_tool_execution_failure' });
  }
  return {
    name: `${slug(report.task)}__${report.primary?.type ?? report.outcome}`,
    goal: report.task,
    source: { sessionId: report.sessionId, outcome: report.outcome, ...(report.primary ? { primary: report.primary.type } : {}) },
    steps: report.turns.map((turn) => ({
      turn: turn.turn,
      text: turn.response?.text ?? '',
      calls: turn.actions.map((action) => ({ name: action.name, arguments: action.arguments, ...(action.settled ? { status: action.settled.status } : {}), ...(action.settled?.errorCode ? { errorCode: action.settled.errorCode } : {}) })),
    })),
    assertions,
  };
};

/** Check a session (its trace view) against an eval case: each assertion is judged on the recorded steps. */
export const checkEvalCase = async (evalCase: EvalCase, view: TraceView, readText: ReadText): Promise<EvalResult> => {
  const report = await analyzeTrace(view, readText);
  const turns = turnsOf(view);
  const actions = turns.flatMap((turn) => turn.actions);
  const reader = new ContextReader(readText);
  const results: EvalResult['results'] = [];
  for (const assertion of evalCase.assertions) {
    if (assertion.type === 'final_success_requires_verification_passed') {
      const passed = !(report.claimedSuccess || report.ended?.status === 'completed') || report.outcome === 'succeeded';
      results.push({ assertion, passed, detail: `outcome ${report.outcome}${report.claimedSuccess ? ', success claimed' : ''}` });
    } else if (assertion.type === 'verification_after_last_change') {
      const last = newest(view.verifications, 1)[0];
      const mutation = lastMutationSeq(turns, backgroundEndsOf(view));
      const change = mutation === Number.POSITIVE_INFINITY ? 'a background command that may change files has no recorded end' : `last change #${mutation}`;
      results.push({ assertion, passed: last !== undefined && last.seq > mutation, detail: last ? `last verification #${last.seq}, ${change}` : 'no verification recorded' });
    } else if (assertion.type === 'context_contains_fact') {
      const fact = normalizeSpace(assertion.fact);
      let where: number | undefined;
      for (const turn of turns) {
        for (const context of turn.contexts) {
          if ((await reader.text(context))?.includes(fact)) where = context.seq;
          if (where !== undefined) break;
        }
        if (where !== undefined) break;
      }
      results.push({ assertion, passed: where !== undefined, detail: where === undefined ? 'no recorded model input contains the fact' : `in the model input recorded at #${where}` });
    } else if (assertion.type === 'no_repeated_call_after_failure') {
      const same = actions.filter((action) => action.name === assertion.name && canonicalEqual(action.arguments, assertion.arguments));
      const repeatedAfterFailure = same.findIndex((action, index) => index > 0 && (same[index - 1]!.settled?.status === 'error' || /deny/i.test(same[index - 1]!.permission?.decision ?? '')));
      results.push({ assertion, passed: repeatedAfterFailure < 0, detail: `${same.length} calls of ${assertion.name} with these arguments` });
    } else {
      const failed = actions.filter((action) => action.failed);
      results.push({ assertion, passed: failed.length === 0, detail: `${failed.length} tool calls failed in the runtime` });
    }
  }
  return { passed: results.every((result) => result.passed), results };
};
