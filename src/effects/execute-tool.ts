import type { RecordEnvelope } from '../../models/envelope.js';
import type { ApprovalOutcome } from '../../machines/permission.machine.js';
import { runToolPipeline, type PipelineEnvironment } from '../tools/tool-pipeline.js';
import type { ResumeCheck } from '../tools/tool.js';
import type { EffectExecutor, EffectRequest } from './effect.js';

const approvalOf = (value: unknown): ApprovalOutcome | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const approval = value as Partial<ApprovalOutcome>;
  if (typeof approval.approvalId !== 'string' || (approval.decision !== 'allow-once' && approval.decision !== 'allow-session' && approval.decision !== 'deny')) return undefined;
  return {
    approvalId: approval.approvalId,
    decision: approval.decision,
    ...(typeof approval.feedback === 'string' ? { feedback: approval.feedback } : {}),
    ...(typeof approval.rule === 'string' ? { rule: approval.rule } : {}),
  };
};

/**
 * Executes `executeTool` through the tool pipeline (src/tools/tool-pipeline.ts). It settles with `tool.settled`,
 * or with `approval.requested` when the permission stage asks a person (the tool does not run; the session waits and
 * requests the call again with the answer). Facts that must be durable before a tool changes anything are appended
 * synced by the pipeline; the rest are written with the settling input.
 */
export const createExecuteToolExecutor = (environment: PipelineEnvironment): EffectExecutor => ({
  resumePolicy: (request) => environment.registry.get(String(request.args.name))?.resumePolicy ?? 'never-rerun',
  async checkResume(request: EffectRequest, started: RecordEnvelope | undefined): Promise<ResumeCheck | undefined> {
    const tool = environment.registry.get(String(request.args.name));
    if (!tool?.checkResume) return undefined;
    const intent = (started?.data as { intent?: Record<string, unknown> } | undefined)?.intent;
    return tool.checkResume(started ? (intent ?? {}) : undefined, { workspace: environment.workspace });
  },
  async execute(request, context) {
    const callId = String(request.args.callId);
    const name = String(request.args.name);
    const args = (typeof request.args.arguments === 'object' && request.args.arguments !== null ? request.args.arguments : {}) as Record<string, unknown>;
    const approval = approvalOf(request.args.approval);
    const result = await runToolPipeline(
      environment,
      { effectId: request.effectId, callId, actor: request.actor, name, arguments: args, ...(approval ? { approval } : {}) },
      {
        sessionId: context.sessionId,
        signal: context.signal,
        now: context.now,
        persist: (facts) => context.recordFacts(facts, { sync: true }),
        progress: (message) => context.live({ type: 'effect.progress', actor: request.actor, effectId: request.effectId, message }),
      },
    );
    const facts = result.facts.length > 0 ? { facts: result.facts } : {};
    if (result.kind === 'ask') return { type: 'approval.requested', corr: callId, data: { ...result.request, elapsedMs: context.elapsedMs() }, ...facts };
    return { type: 'tool.settled', corr: callId, data: { effectId: request.effectId, callId, name, ...result.outcome, elapsedMs: context.elapsedMs() }, ...facts };
  },
});
