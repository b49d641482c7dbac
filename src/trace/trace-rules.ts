import { canonicalEqual } from '../host/canonical-equal.js';
import { keyLines, normalizeSpace } from '../projections/key-lines.js';
import type { FailClosedClass } from '../../models/fail-closed.js';
import type { SessionCaveat, UnresolvedFindings } from '../../models/session.records.js';
import type { TraceAction, TraceTurn, TraceVerification } from '../projections/trace.view.js';
import { changesWorkspace, ContextReader, fullOutput, nextTurnAfter } from './trace-evidence.js';
import { repairRoutes, type Boundary, type FailureCategory, type ReadText, type TraceFinding } from './trace-types.js';

/** What every rule reads: the linked turns, a reader for recorded model inputs and blobs, and the final message. */
export interface RuleInput {
  turns: readonly TraceTurn[];
  reader: ContextReader;
  readText: ReadText;
  final?: { turn: TraceTurn; claims: boolean };
  lastVerification?: TraceVerification;
  lastMutation: number;
  /** When the last change was a background command's: its call's request seq and its end's (absent: none recorded). */
  backgroundChange?: { requested: number; ended?: number };
  completed: boolean;
  /** The root's `session.ended`, with the fail-closed findings a completion left standing. */
  ended?: { seq: number; unresolved?: UnresolvedFindings; caveats?: SessionCaveat[] };
}

const finding = (category: FailureCategory, fields: Omit<TraceFinding, 'category' | 'suggestedFixArea' | 'unknowns'> & { unknowns?: string[] }): TraceFinding => ({
  category,
  suggestedFixArea: repairRoutes[category],
  unknowns: [],
  ...fields,
});

const at = (ref: { seq: number } | undefined): string[] => (ref ? [`#${ref.seq}`] : []);

const clip = (text: string, length: number): string => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

/** Verification rules (TA-3, TA-4): success claimed without a verification, after a stale one, or against a failed one. */
export const verificationRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const { final, lastVerification: verification, completed } = input;
  if (!completed || !final?.claims || !final.turn.response) return [];
  const finalRef = final.turn.response;
  if (!verification) {
    return [finding('verification_missing', { type: 'missing_verification', boundary: 'verification', seq: finalRef.seq, confidence: 'high', evidence: at(finalRef), claim: `the final message (#${finalRef.seq}) claims success but no verification was recorded: the outcome is unverified` })];
  }
  if (verification.status === 'passed' && verification.seq < input.lastMutation) {
    const background = input.backgroundChange;
    if (background) {
      const when = background.ended === undefined ? 'has no recorded end (still running, or stopped without one)' : `ended at #${background.ended}, during or after it`;
      return [finding('verification_missing', { type: 'verification_stale', boundary: 'verification', seq: finalRef.seq, confidence: 'high', evidence: [...at(verification), `#${background.requested}`, ...(background.ended !== undefined ? [`#${background.ended}`] : []), ...at(finalRef)], claim: `the background command requested at #${background.requested}, which may change files, ${when}: the last passing verification (#${verification.seq}) no longer speaks for the code; the final success claim is unverified` })];
    }
    return [finding('verification_missing', { type: 'verification_stale', boundary: 'verification', seq: finalRef.seq, confidence: 'high', evidence: [...at(verification), `#${input.lastMutation}`, ...at(finalRef)], claim: `the last passing verification (#${verification.seq}) ran before the last change (#${input.lastMutation}); the final success claim is unverified` })];
  }
  if (verification.status === 'passed') return [];
  if (verification.status === 'inconclusive') {
    return [finding('verification_missing', { type: 'missing_verification', boundary: 'verification', seq: finalRef.seq, confidence: 'high', evidence: [...at(verification), ...at(finalRef)], claim: `the last verification (#${verification.seq}) ${verification.command ? `\`${clip(verification.command, 60)}\`` : verification.name} exited 0 but ran no test; the final success claim (#${finalRef.seq}) is unverified` })];
  }
  const findings = [finding('verification_missing', { type: 'verification_contradicted_final', boundary: 'verification', seq: finalRef.seq, confidence: 'high', evidence: [...at(verification), ...at(finalRef)], claim: `claimed success over a failed verification: ${verification.command ? `\`${clip(verification.command, 60)}\`` : verification.name} failed at #${verification.seq}${verification.exitCode !== undefined && verification.exitCode !== null ? ` (exit ${verification.exitCode})` : ''}, yet the final message (#${finalRef.seq}) claims success` })];
  const action = input.turns.flatMap((turn) => turn.actions).find((candidate) => candidate.verification?.id === verification.id);
  const output = action ? await fullOutput(action, input.readText) : undefined;
  const facts = keyLines(output ?? verification.summary, 8);
  if (facts.length === 0) return findings;
  const seen = await input.reader.reached(final.turn, facts);
  if (seen.answer === 'yes') {
    findings.push(finding('model_judgement_error', { type: 'model_judgement_error', boundary: 'model judgement', seq: finalRef.seq, confidence: 'medium', fact: seen.found[0]!, evidence: [...at(seen.context), ...at(verification), ...at(finalRef)], claim: `the model's context for its final turn (#${seen.context!.seq}) contained "${seen.found[0]}" and the model still claimed success` }));
  } else if (seen.answer === 'no') {
    const inObservation = action?.settled ? normalizeSpace(action.settled.observation).includes(normalizeSpace(facts[0]!)) : false;
    findings.push(finding('context_missing', { type: 'context_projection_missing_fact', boundary: inObservation ? 'context projection' : 'observation', seq: finalRef.seq, confidence: 'high', fact: facts[0]!, discoveredAt: `#${verification.seq}`, missingFrom: `#${seen.context!.seq}`, evidence: [...at(verification), ...at(seen.context)], claim: `the failure "${facts[0]}" never reached the model's final context (#${seen.context!.seq}); the success claim is not a model error` }));
  } else {
    findings.push(finding('unknown_or_mixed', { type: 'unknown_or_mixed', boundary: 'model judgement', seq: finalRef.seq, confidence: 'low', evidence: [...at(verification), ...at(finalRef)], unknowns: [`no readable context snapshot for turn ${final.turn.turn}: cannot tell whether the model saw the failure`], claim: 'the success claim contradicts the verification, and whether the model saw the failure is unknown' }));
  }
  return findings;
};

/** Observation fidelity: key lines of a cut output that never reached any later model input (TA-11, C.4). */
export const truncationRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const findings: TraceFinding[] = [];
  for (const turn of input.turns) {
    for (const action of turn.actions) {
      const settled = action.settled;
      if (!settled?.truncated) continue;
      const full = await input.readText(settled.truncated.artifact);
      if (full === undefined) continue;
      const observed = normalizeSpace(settled.observation);
      const hidden = keyLines(full, 20).filter((line) => !observed.includes(normalizeSpace(line)));
      if (hidden.length === 0) continue;
      const later = input.turns.filter((candidate) => candidate.actor === turn.actor && candidate.requested.seq > settled.seq);
      const reached = await Promise.all(later.map((candidate) => input.reader.reached(candidate, hidden)));
      if (reached.some((result) => result.answer === 'yes')) continue;
      const next = reached[0];
      const unknown = later.length === 0 || reached.every((result) => result.answer === 'unknown');
      findings.push(finding('context_missing', {
        type: 'observation_truncated_key_fact',
        boundary: 'observation',
        seq: settled.seq,
        confidence: unknown ? 'medium' : 'high',
        fact: hidden[0]!,
        discoveredAt: settled.truncated.artifact,
        ...(next?.context ? { missingFrom: `#${next.context.seq}` } : {}),
        evidence: [`#${settled.seq}`, settled.truncated.artifact, ...at(next?.context)],
        unknowns: unknown ? ['no later context snapshot could be read'] : [],
        claim: `${action.name} output was cut (${settled.truncated.omittedBytes} bytes) and the cut hid "${hidden[0]}"${hidden.length > 1 ? ` and ${hidden.length - 1} more key lines` : ''}; it never reached the model's context`,
      }));
    }
  }
  return findings;
};

/** Context projection: a failing result's key lines missing from the very next model input. */
export const projectionRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const findings: TraceFinding[] = [];
  for (const turn of input.turns) {
    for (const action of turn.actions) {
      const settled = action.settled;
      if (!settled || settled.truncated || (settled.status === 'ok' && action.verification?.status !== 'failed')) continue;
      const facts = keyLines(settled.observation, 3);
      if (facts.length === 0) continue;
      const next = nextTurnAfter(input.turns, turn.actor, settled.seq);
      const seen = await input.reader.reached(next, facts);
      if (seen.answer !== 'no') continue;
      findings.push(finding('context_missing', { type: 'context_projection_missing_fact', boundary: 'context projection', seq: seen.context!.seq, confidence: 'high', fact: facts[0]!, discoveredAt: `#${settled.seq}`, missingFrom: `#${seen.context!.seq}`, evidence: [`#${settled.seq}`, `#${seen.context!.seq}`], claim: `"${facts[0]}" from ${action.name} (#${settled.seq}) was left out of the next model input (#${seen.context!.seq})` }));
    }
  }
  return findings;
};

const failedWith = (action: TraceAction): string | undefined => {
  if (action.permission && /deny|denied|reject/i.test(action.permission.decision)) return 'denied by permission';
  if (action.settled?.status === 'error') return action.settled.errorCode ?? 'error';
  return undefined;
};

/**
 * A failed (or denied) call proposed again unchanged in a later turn with no change to the workspace in between
 * (TA-10, "agent should not repeat the same fix"); re-running a test after a fix is not a repeat.
 */
export const repetitionRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const findings: TraceFinding[] = [];
  const actions = input.turns.flatMap((turn) => turn.actions.map((action) => ({ turn, action })));
  const mutations = actions.filter(({ action }) => changesWorkspace(action)).map(({ action }) => action.settled!.seq);
  const reported = new Set<string>();
  for (const [index, { turn, action }] of actions.entries()) {
    const failure = failedWith(action);
    if (!failure || reported.has(action.callId)) continue;
    const failedAt = (action.settled ?? action.permission ?? action.requested).seq;
    const repeat = actions.slice(index + 1).find(({ turn: later, action: candidate }) => later.actor === turn.actor && later.requested.seq > turn.requested.seq && candidate.name === action.name && canonicalEqual(candidate.arguments, action.arguments));
    if (!repeat || mutations.some((seq) => seq > failedAt && seq < repeat.action.requested.seq)) continue;
    reported.add(action.callId);
    const denial = failure === 'Denied' || failure === 'denied by permission';
    const evidenceLine = (action.permission?.reason ?? action.settled?.observation ?? '').split('\n')[0]!.trim();
    const seen = await input.reader.reached(repeat.turn, evidenceLine ? [evidenceLine] : []);
    const base = { seq: repeat.action.requested.seq, call: { name: action.name, arguments: action.arguments }, evidence: [`#${(action.settled ?? action.permission ?? action.requested).seq}`, ...at(seen.context), `#${repeat.action.requested.seq}`] };
    const what = `${action.name}(${JSON.stringify(action.arguments).slice(0, 80)}) ${denial ? 'was denied' : `failed (${failure})`} at #${(action.settled ?? action.requested).seq} and was proposed again unchanged at #${repeat.action.requested.seq}`;
    if (seen.answer === 'yes') {
      findings.push(finding('model_judgement_error', { ...base, type: denial ? 'denial_ignored' : 'repeated_failed_call', boundary: 'model judgement', confidence: denial ? 'high' : 'medium', fact: evidenceLine, claim: `${what}, although the model's context (#${seen.context!.seq}) showed "${evidenceLine}"` }));
    } else if (seen.answer === 'no') {
      findings.push(finding('context_missing', { ...base, type: 'context_projection_missing_fact', boundary: 'context projection', confidence: 'high', fact: evidenceLine, missingFrom: `#${seen.context!.seq}`, claim: `${what}; the ${denial ? 'denial' : 'failure'} never reached the model's context (#${seen.context!.seq})` }));
    } else {
      findings.push(finding('unknown_or_mixed', { ...base, type: denial ? 'denial_ignored' : 'repeated_failed_call', boundary: 'model judgement', confidence: 'low', unknowns: [`no readable context snapshot for turn ${repeat.turn.turn}`], claim: `${what}; whether the model saw why is unknown` }));
    }
  }
  return findings;
};

/** Execution and permission facts: a tool that crashed (infrastructure), an allow with no rationale (TA-15), a provider failure. */
export const executionRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const findings: TraceFinding[] = [];
  for (const turn of input.turns) {
    if (turn.failure) {
      const code = turn.failure.code;
      findings.push(finding(code === 'context_length' ? 'context_missing' : 'unknown_or_mixed', { type: 'provider_failed', boundary: code === 'context_length' ? 'context projection' : 'provider', seq: turn.failure.seq, confidence: 'high', evidence: [`#${turn.failure.seq}`, ...at(turn.contexts[turn.contexts.length - 1])], claim: `the model call of turn ${turn.turn} failed: ${code}: ${turn.failure.message}`, unknowns: code === 'context_length' ? [] : ['a provider failure says nothing about the agent; the run stopped before it could be judged'] }));
    }
    for (const action of turn.actions) {
      if (action.failed) {
        findings.push(finding('tool_execution_error', { type: 'tool_execution_error', boundary: 'execution', seq: action.failed.seq, confidence: 'high', evidence: [`#${action.requested.seq}`, ...at(action.started), `#${action.failed.seq}`], claim: `${action.name} failed in the runtime (${action.failed.code}: ${action.failed.message}); the turn stopped` }));
      }
      if (action.permission && /allow|approve/i.test(action.permission.decision) && !action.permission.reason?.trim()) {
        findings.push(finding('permission_misclassification', { type: 'permission_allow_without_rationale', boundary: 'permission', seq: action.permission.seq, confidence: 'medium', evidence: [`#${action.permission.seq}`], claim: `${action.name} was allowed at #${action.permission.seq} with no recorded rationale` }));
      }
    }
  }
  return findings;
};

/** Where a fail-closed class says the chain broke, and the repair route of that break. */
const failClosedPlace = (name: FailClosedClass): { category: FailureCategory; boundary: Boundary } => {
  if (name === 'runtime.shell_boundary_violation') return { category: 'tool_execution_error', boundary: 'execution' };
  if (name === 'tool.response_truncation_policy_violation') return { category: 'observation_projection_error', boundary: 'observation' };
  if (name === 'mutation.policy_digest_mismatch' || name === 'mutation.capability_claim_missing') return { category: 'permission_misclassification', boundary: 'permission' };
  if (name === 'tool.schema_invalid' || name === 'tool.unknown_or_disallowed' || name === 'tool.parallel_policy_violation' || name.startsWith('protocol.')) return { category: 'model_judgement_error', boundary: 'tool intent' };
  return { category: 'tool_execution_error', boundary: 'execution' };
};

/**
 * Fail closed on side effects, not on speech: a session that completed over a blocked tool turn keeps that turn's
 * findings on `session.ended`. The answer stands as the model's claim; this rule says no MutationReady evidence
 * backs it, cites the calls, and keeps the outcome from `succeeded`.
 */
export const failClosedRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const unresolved = input.ended?.unresolved;
  if (!unresolved) return [];
  const calls = new Map(input.turns.flatMap((turn) => turn.actions.map((action) => [action.callId, action] as const)));
  const byClass = new Map<FailClosedClass, UnresolvedFindings['findings']>();
  for (const entry of unresolved.findings) byClass.set(entry.class, [...(byClass.get(entry.class) ?? []), entry]);
  return [...byClass].map(([name, entries]) => {
    const refs = entries.flatMap((entry) => {
      const action = entry.callId ? calls.get(entry.callId) : undefined;
      return action ? [`#${(action.settled ?? action.requested).seq}`] : [];
    });
    return finding(failClosedPlace(name).category, {
      type: 'unresolved_fail_closed',
      boundary: failClosedPlace(name).boundary,
      seq: input.ended!.seq,
      confidence: 'high',
      evidence: [...new Set(refs), `#${input.ended!.seq}`],
      claim: `the session completed over turn ${unresolved.turnId}, blocked by ${name} (${clip(entries.map((entry) => entry.detail).join('; '), 160)}): nothing that turn did is MutationReady, so the final answer is an unsupported claim`,
    });
  });
};

/**
 * What a completion left open besides fail-closed findings (`session.ended.caveats`): a final reply the output token
 * limit cut (the answer is incomplete), or a `stop` hook that still objected when its continuations ran out. Either
 * way the session did not end the way a clean completion does, and the trace says so at the end it happened.
 */
export const caveatRules = async (input: RuleInput): Promise<TraceFinding[]> => {
  const ended = input.ended;
  if (!ended?.caveats) return [];
  const final = input.final?.turn.response;
  const evidence = [...at(final), `#${ended.seq}`];
  return ended.caveats.map((caveat) =>
    caveat.kind === 'reply_cut'
      ? finding('unknown_or_mixed', { type: 'reply_cut', boundary: 'provider', seq: ended.seq, confidence: 'high', evidence, unknowns: ['what the rest of the answer would have said'], claim: `${caveat.detail}; raise the output limit (maxOutputTokens) or ask for a shorter answer` })
      : finding('verification_missing', { type: 'stop_hook_objection', boundary: 'verification', seq: ended.seq, confidence: 'high', evidence, fact: caveat.detail, claim: `the stop hook ${caveat.by ?? ''}${caveat.by ? ' ' : ''}still objected when the session ended (its continuations were spent): "${clip(caveat.detail, 160)}"` }),
  );
};
