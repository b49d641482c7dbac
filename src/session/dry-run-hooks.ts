import type { RecordEnvelope } from '../../models/envelope.js';
import type { HookDecided } from '../../models/hook.records.js';
import type { SessionCreated } from '../../models/session.records.js';
import { HookKernel } from '../hooks/hook-kernel.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { DryRunReport } from './dry-run.js';

/**
 * Add today's in-process `preToolUse` hooks to a dry-run report: each recorded call is shown to the plugin hooks
 * registered now (command hooks never: a dry run runs no process) and compared with the decision its
 * `hook.decided` recorded (`none` when no hook ran then). Nothing is executed or written; a hook sees the recorded
 * arguments, the recorded agent and the session's mode.
 */
export const dryRunHooks = async (records: readonly RecordEnvelope[], report: DryRunReport, options: { hooks: HookKernel; registry: ToolRegistry; mode?: string }): Promise<DryRunReport & { hooksEvaluated: boolean }> => {
  const kernel = new HookKernel(options.hooks.list().filter((hook) => hook.kind === 'plugin'));
  const created = records[0]?.type === 'session.created' ? (records[0].data as SessionCreated) : undefined;
  const recorded = new Map<string, HookDecided>();
  for (const record of records) {
    if (record.type !== 'hook.decided') continue;
    const data = record.data as HookDecided;
    if (data.point === 'preToolUse' && data.callId) recorded.set(data.callId, data);
  }
  const signal = new AbortController().signal;
  const calls = [];
  for (const call of report.calls) {
    const then = recorded.get(call.callId)?.decision ?? 'none';
    const tool: AnyToolDefinition | undefined = options.registry.get(call.name);
    if (!tool || call.now.validation !== 'valid' || !kernel.has('preToolUse', call.name)) {
      const reasons = then !== 'none' && then !== 'allow' ? [...call.reasons, `hook: ${then} then, no in-process hook decides now`] : call.reasons;
      calls.push({ ...call, then: { ...call.then, hook: then }, now: { ...call.now, hook: 'none' }, reasons, changed: reasons.length > 0 });
      continue;
    }
    const decided = await kernel.decide(
      'preToolUse',
      { sessionId: created?.sessionId ?? '', actor: call.actor, cwd: created?.workspace ?? '', mode: options.mode ?? 'default', point: 'preToolUse', tool: { name: call.name, input: call.arguments, callId: call.callId, effectId: '', risk: tool.risk, readOnly: tool.annotations.readOnly } },
      { signal, tool: call.name },
    );
    const now = decided.decision;
    const same = now === then || (now === 'none' && then === 'allow') || (now === 'allow' && then === 'none');
    const reasons = same ? call.reasons : [...call.reasons, `hook: ${then} then, ${now} now${decided.reason ? ` (${decided.reason})` : ''}`];
    calls.push({ ...call, then: { ...call.then, hook: then }, now: { ...call.now, hook: now, ...(decided.reason ? { hookReason: decided.reason } : {}) }, reasons, changed: reasons.length > 0 });
  }
  return { ...report, calls, changed: calls.filter((call) => call.changed).length, hooksEvaluated: true };
};
