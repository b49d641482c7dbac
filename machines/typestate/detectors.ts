import type { FailClosedFinding } from '../../models/fail-closed.js';
import type { CallSpec, RequestRow, ResultRow } from '../../models/turn.records.js';

/** Request-stage classes: calls outside the allow-list, text-mode output without a normaliser. */
export const detectRequestFindings = (callSpec: CallSpec, requests: readonly RequestRow[]): FailClosedFinding[] => {
  const findings: FailClosedFinding[] = [];
  if (callSpec.actionMode === 'text' && !callSpec.normalizerId && requests.length > 0) {
    findings.push({ class: 'tool.unknown_or_disallowed', detail: 'text-mode output without a normaliser is observe-only' });
  }
  const allowed = new Set(callSpec.toolPolicy.allow);
  for (const request of requests) {
    if (!allowed.has(request.name)) findings.push({ class: 'tool.unknown_or_disallowed', detail: `${request.name} is not in the turn's tool allow-list`, callId: request.callId });
  }
  return findings;
};

/**
 * Result-stage classes for one arriving row: schema failures, truncation without the policy's evidence, shell rows
 * without boundary evidence, and out-of-order arrival when the transport policy is strict.
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
  if (options.shellTools.includes(row.name) && (!row.provenance?.workdir || !row.provenance.sandboxProfile || !row.provenance.commandDigest)) {
    findings.push({ class: 'runtime.shell_boundary_violation', detail: `${row.name} result lacks workdir, sandbox profile or command digest`, callId: row.callId });
  }
  if (callSpec.parallelPolicy.strictOrder && options.requestIndex !== options.arrivedBefore) {
    findings.push({ class: 'protocol.parallel_transport_order_invalid', detail: `result ${options.arrivedBefore + 1} belongs to request ${options.requestIndex + 1}`, callId: row.callId });
  }
  return findings;
};
