import type { FailClosedFinding } from '../../models/fail-closed.js';
import type { CallSpec, RequestRow, ResultRow } from '../../models/turn.records.js';

/**
 * Request-stage classes: calls outside the allow-list, text-mode output without a normaliser. A call to a tool the
 * CallSpec names as hidden by policy (the mode, a tool-wide deny) is not one: it is a denial, checked on its result.
 */
export const detectRequestFindings = (callSpec: CallSpec, requests: readonly RequestRow[]): FailClosedFinding[] => {
  const findings: FailClosedFinding[] = [];
  if (callSpec.actionMode === 'text' && !callSpec.normalizerId && requests.length > 0) {
    findings.push({ class: 'tool.unknown_or_disallowed', detail: 'text-mode output without a normaliser is observe-only' });
  }
  const allowed = new Set(callSpec.toolPolicy.allow);
  const hidden = callSpec.toolPolicy.hidden ?? {};
  for (const request of requests) {
    if (!allowed.has(request.name) && !Object.hasOwn(hidden, request.name)) findings.push({ class: 'tool.unknown_or_disallowed', detail: `${request.name} is not in the turn's tool allow-list`, callId: request.callId });
  }
  return findings;
};

/** True for a result the pipeline refused or cancelled before the tool ran (validation, visibility, permission, an abort): nothing executed. */
const neverRan = (row: ResultRow): boolean => row.status === 'error' && row.failedStage !== undefined;

/**
 * Result-stage classes for one arriving row: schema failures, truncation without the policy's evidence, shell rows
 * that ran without boundary evidence, a hidden tool whose result is not its denial, and out-of-order arrival when
 * the transport policy is strict.
 */
export const detectResultFindings = (options: { callSpec: CallSpec; row: ResultRow; requestIndex: number; arrivedBefore: number; shellTools: readonly string[] }): FailClosedFinding[] => {
  const { callSpec, row } = options;
  const findings: FailClosedFinding[] = [];
  if (row.status === 'error' && row.failedStage === 'schema') findings.push({ class: 'tool.schema_invalid', detail: `${row.name} arguments failed schema validation`, callId: row.callId });
  const truncation = callSpec.toolResponseTruncationPolicy;
  if (row.observationChars > truncation.maxChars + truncation.marker.length + 512) {
    findings.push({ class: 'tool.response_truncation_policy_violation', detail: `observation of ${row.observationChars} characters exceeds ${truncation.maxChars}`, callId: row.callId });
  }
  if (row.truncation && truncation.artifactRequired && !row.truncation.artifact.startsWith('artifact://')) {
    findings.push({ class: 'tool.response_truncation_policy_violation', detail: 'a truncated result names no artifact', callId: row.callId });
  }
  const hidden = callSpec.toolPolicy.hidden ?? {};
  if (Object.hasOwn(hidden, row.name) && !callSpec.toolPolicy.allow.includes(row.name) && !(row.errorCode === 'Denied' && row.failedStage === 'visibility')) {
    findings.push({ class: 'tool.unknown_or_disallowed', detail: `${row.name} is hidden by ${hidden[row.name]} this turn, yet its result is not a denial`, callId: row.callId });
  }
  // Shell boundary evidence describes a command that ran; a call refused before running has none to give.
  if (options.shellTools.includes(row.name) && !neverRan(row) && (!row.provenance?.workdir || !row.provenance.sandboxProfile || !row.provenance.commandDigest)) {
    findings.push({ class: 'runtime.shell_boundary_violation', detail: `${row.name} result lacks workdir, sandbox profile or command digest`, callId: row.callId });
  }
  if (callSpec.parallelPolicy.strictOrder && options.requestIndex !== options.arrivedBefore) {
    findings.push({ class: 'protocol.parallel_transport_order_invalid', detail: `result ${options.arrivedBefore + 1} belongs to request ${options.requestIndex + 1}`, callId: row.callId });
  }
  return findings;
};

const stageRank = { pre_flight: 0, input: 1, output: 2 } as const;

/** Stages a call reached, from where it stopped: none before validation, the input stage if it stopped at permission or its input guardrail, both once it ran. */
const stagesReached = (row: ResultRow): Array<'input' | 'output'> => {
  switch (row.failedStage) {
    case 'lookup':
    case 'visibility':
    case 'schema':
    case 'runtime-validation':
    case 'pre-flight':
    case 'budget':
    case 'parallel':
    case 'hook':
      return [];
    case 'guardrail':
    case 'permission':
    case 'cancelled':
      return ['input'];
    default:
      return ['input', 'output'];
  }
};

/**
 * Guardrail classes at the request stage (harness-typestate §4.5, §7): with a `pre_flight` stage configured, the
 * turn must carry its pre-flight decision before any call runs.
 */
export const detectPreFlightFindings = (callSpec: CallSpec, preFlight: { verdict: string } | undefined): FailClosedFinding[] => {
  if (!callSpec.guardrailStages?.includes('pre_flight') || preFlight) return [];
  return [{ class: 'governance.guardrail_stage_missing', detail: 'the turn has no pre_flight guardrail decision' }];
};

/**
 * Guardrail classes for one result row: every configured stage the call reached must have its decision
 * (`governance.guardrail_stage_missing`), and the decisions must be in stage order, each stage once
 * (`governance.guardrail_stage_order_invalid`).
 */
export const detectGuardrailFindings = (callSpec: CallSpec, row: ResultRow): FailClosedFinding[] => {
  const configured = callSpec.guardrailStages;
  const evidence = row.guardrails ?? [];
  if (!configured || configured.length === 0) return [];
  const findings: FailClosedFinding[] = [];
  const present = new Set(evidence.map((entry) => entry.stage));
  for (const stage of stagesReached(row)) {
    if (configured.includes(stage) && !present.has(stage)) findings.push({ class: 'governance.guardrail_stage_missing', detail: `${row.name} has no ${stage} guardrail decision`, callId: row.callId });
  }
  for (let index = 1; index < evidence.length; index++) {
    if (stageRank[evidence[index]!.stage] <= stageRank[evidence[index - 1]!.stage]) {
      findings.push({ class: 'governance.guardrail_stage_order_invalid', detail: `${row.name}: ${evidence[index]!.stage} decided after ${evidence[index - 1]!.stage}`, callId: row.callId });
      break;
    }
  }
  return findings;
};
