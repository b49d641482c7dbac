import type { RecordEnvelope } from '../../models/envelope.js';
import type { EffectRequested } from '../../models/effect.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { DelegationStarted } from '../../models/delegation.records.js';
import { reportTool } from '../../machines/session.machine.js';
import { submitReportTool } from '../tools/submit-report.tool.js';
import { flattenRecords } from '../host/step-record.js';

/** A permission decision as a pluggable policy returns it. */
export interface DryRunVerdict {
  decision: 'allow' | 'ask' | 'deny';
  reason?: string;
}

/** Today's permission policy for one recorded call; undefined means "not evaluated" (no policy plugged in). */
export type DecidePermission = (call: { actor: string; name: string; arguments: Record<string, unknown>; tool: AnyToolDefinition | undefined }) => DryRunVerdict | undefined;

/** How the schema stage treats a call: valid, invalid arguments, an unknown tool, or never reached (`not-run`). */
export type ValidationVerdict = 'valid' | 'invalid' | 'unknown-tool' | 'not-run';

/** One recorded tool call, as decided then (from the log) and now (re-evaluated, nothing executed). */
export interface DryRunCall {
  seq: number;
  actor: string;
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
  /**
   * `permission` is the policy's decision then: `ask` for a call a person answered at the prompt (`answered` holds
   * the answer), `deny` for a call a rule or the mode refused before any permission record (a hidden tool).
   * `answeredBy` is `--yes` when the flags answered the question in advance.
   */
  then: { validation: ValidationVerdict; permission?: string; answered?: string; answeredBy?: string; status?: 'ok' | 'error'; errorCode?: string; hook?: string };
  now: { validation: Exclude<ValidationVerdict, 'not-run'>; issues?: string; permission?: string; permissionReason?: string; hook?: string; hookReason?: string };
  changed: boolean;
  reasons: string[];
}

export interface DryRunReport {
  calls: DryRunCall[];
  changed: number;
  /** False when no permission policy was plugged in: only validation was re-evaluated. */
  permissionEvaluated: boolean;
}

const thenValidation = (started: boolean, settled: ToolSettled | undefined, validated: boolean | undefined): ValidationVerdict => {
  if (validated !== undefined) return validated ? 'valid' : 'invalid';
  if (started) return 'valid';
  if (settled?.errorCode === 'InvalidInput') return /^InvalidInput: unknown tool/.test(settled.observation) ? 'unknown-tool' : 'invalid';
  return 'not-run';
};

/**
 * Re-evaluate every recorded tool call under today's registry (lookup and schema validation) and, when `decide` is
 * given, today's permission policy — executing nothing, calling no model, writing nothing — and list the calls
 * that would now be decided differently. "Then" comes from the log: `tool.started` (it passed validation),
 * `tool.settled` (`InvalidInput` without a start means validation refused it), and `tool.validated` /
 * `permission.decided` records when the log has them.
 */
export const dryRunSession = (records: readonly RecordEnvelope[], options: { registry: ToolRegistry; decide?: DecidePermission }): DryRunReport => {
  const started = new Set<string>();
  const settled = new Map<string, ToolSettled>();
  const permissions = new Map<string, string>();
  const answers = new Map<string, string>();
  const answeredBy = new Map<string, string>();
  const validated = new Map<string, boolean>();
  const requests: Array<{ record: RecordEnvelope; data: EffectRequested }> = [];
  // A child agent's `submit_report` is checked against that child's output contract.
  const reportTools = new Map<string, AnyToolDefinition>();
  for (const record of flattenRecords(records)) {
    if (record.type === 'delegation.started') {
      const started = record.data as DelegationStarted;
      reportTools.set(started.child, submitReportTool(started.task.contract));
    }
    const data = record.data as Record<string, unknown>;
    const callId = record.corr ?? (typeof data.callId === 'string' ? data.callId : undefined);
    if (record.type === 'effect.requested' && (data as EffectRequested).kind === 'executeTool') {
      // A call a person answered is requested again with the answer (same call id): one call, listed once.
      if (!requests.some((request) => request.data.args.callId === (data as EffectRequested).args.callId)) requests.push({ record, data: data as EffectRequested });
    } else if (!callId) continue;
    else if (record.type === 'tool.started') started.add(callId);
    else if (record.type === 'tool.settled') settled.set(callId, data as ToolSettled);
    else if (record.type === 'permission.decided') {
      // A person's answer follows the policy's `ask`: "then" is what the policy said, the answer is kept beside it.
      const decision = String(data.decision ?? data.outcome ?? 'unknown');
      if (data.source === 'user' && permissions.get(callId) === 'ask') answers.set(callId, decision);
      else permissions.set(callId, decision);
      if (data.source === 'pre-approved' && data.rule === '--yes') answeredBy.set(callId, '--yes');
    }
    else if (record.type === 'tool.validated') validated.set(callId, data.ok !== false && data.valid !== false);
  }
  const calls = requests.map(({ record, data }): DryRunCall => {
    const callId = String(data.args.callId);
    const name = String(data.args.name);
    const args = (data.args.arguments ?? {}) as Record<string, unknown>;
    const outcome = settled.get(callId);
    // Refused before the permission stage wrote anything (a tool a deny rule or the mode hides): a deny all the same.
    // (A hook's or the sandbox's refusal is not a permission decision: those stay out of "then" permission.)
    const refusedByPolicy = outcome?.errorCode === 'Denied' && (outcome.failedStage === 'visibility' || outcome.failedStage === 'permission');
    const permission = permissions.get(callId) ?? (refusedByPolicy ? 'deny' : undefined);
    const then: DryRunCall['then'] = {
      validation: thenValidation(started.has(callId), outcome, validated.get(callId)),
      ...(permission !== undefined ? { permission } : {}),
      ...(answers.has(callId) ? { answered: answers.get(callId)! } : {}),
      ...(answeredBy.has(callId) ? { answeredBy: answeredBy.get(callId)! } : {}),
      ...(outcome ? { status: outcome.status } : {}),
      ...(outcome?.errorCode ? { errorCode: outcome.errorCode } : {}),
    };
    const tool = name === reportTool && reportTools.has(record.actor) ? reportTools.get(record.actor) : options.registry.get(name);
    const parsed = tool?.parameters.safeParse(args);
    const verdict = options.decide?.({ actor: record.actor, name, arguments: args, tool });
    const now: DryRunCall['now'] = {
      validation: !tool ? 'unknown-tool' : parsed?.success ? 'valid' : 'invalid',
      ...(parsed && !parsed.success ? { issues: parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(arguments)'}: ${issue.message}`).join('; ') } : {}),
      ...(verdict ? { permission: verdict.decision, ...(verdict.reason ? { permissionReason: verdict.reason } : {}) } : {}),
    };
    const reasons: string[] = [];
    if (then.validation !== 'not-run' && then.validation !== now.validation) reasons.push(`validation: ${then.validation} then, ${now.validation} now${now.issues ? ` (${now.issues})` : ''}`);
    // Then and now agree when the policy says the same, or when it says now what a person answered then (asked
    // then and allowed, allowed now without asking: the call runs either way).
    if (now.permission !== undefined && now.validation === 'valid' && then.permission !== undefined && then.permission !== now.permission && then.answered !== now.permission) {
      reasons.push(`permission: ${then.permission} then, ${now.permission} now${then.answeredBy === '--yes' && now.permission === 'ask' ? ' (then answered in advance by --yes: pass --yes to compare like with like)' : ''}`);
    }
    if (now.permission !== undefined && now.validation === 'valid' && then.permission === undefined && then.validation === 'valid' && now.permission !== 'allow') reasons.push(`permission: ran without a permission decision then, ${now.permission} now`);
    return { seq: record.seq, actor: record.actor, callId, name, arguments: args, then, now, changed: reasons.length > 0, reasons };
  });
  return { calls, changed: calls.filter((call) => call.changed).length, permissionEvaluated: options.decide !== undefined };
};
