import type { BlobStore } from '../../stores/blob-store.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { runToolCall } from '../tools/tool-runtime.js';
import type { Workspace } from '../tools/workspace.js';
import type { EffectExecutor, FactDraft } from './effect.js';
import { defaultVerificationClassifier, verificationOf, type VerificationClassifier } from './verification.js';

export interface ExecuteToolOptions {
  registry: ToolRegistry;
  workspace: Workspace;
  blobs: BlobStore;
  observationLimit?: number;
  /** Which calls are verifications (default: test commands and tools named like `run_tests`). */
  classifyVerification?: VerificationClassifier;
}

/**
 * Executes `executeTool` through the tool pipeline. For tools that change anything, `tool.started` is appended
 * (synced) right before the tool runs, so a crash mid-tool leaves evidence that it may have run; for read-only
 * tools it is written with the settling step, stamped with the time the tool actually started. A call the
 * classifier marks as a verification that actually ran also gets a `verification.recorded` fact in that batch.
 */
export const createExecuteToolExecutor = ({ registry, workspace, blobs, observationLimit, classifyVerification = defaultVerificationClassifier }: ExecuteToolOptions): EffectExecutor => {
  const readBaselines = new Map<string, string>();
  return {
    resumePolicy: (request) => registry.get(String(request.args.name))?.resumePolicy ?? 'never-rerun',
    isExclusive: (request) => !(registry.get(String(request.args.name))?.annotations.readOnly ?? false),
    async execute(request, context) {
      const callId = String(request.args.callId);
      const name = String(request.args.name);
      const args = (request.args.arguments ?? {}) as Record<string, unknown>;
      const readOnly = registry.get(name)?.annotations.readOnly ?? false;
      const deferred: FactDraft[] = [];
      const started: FactDraft = { type: 'tool.started', data: { effectId: request.effectId, callId, name }, corr: callId };
      let ran = false;
      const outcome = await runToolCall(
        registry,
        { name, arguments: args },
        { sessionId: context.sessionId, callId, workspace, blobs, signal: context.signal, readBaselines },
        {
          ...(observationLimit === undefined ? {} : { observationLimit }),
          // A tool that changes something leaves durable evidence before it runs; a read-only one needs none.
          beforeExecute: async () => {
            ran = true;
            if (readOnly) deferred.push({ ...started, at: context.now() });
            else await context.recordFacts([started], { sync: true });
          },
        },
      );
      const verification = ran ? classifyVerification({ name, arguments: args }) : undefined;
      if (verification) deferred.push({ type: 'verification.recorded', data: verificationOf({ name, arguments: args, callId }, request.effectId, outcome, verification), corr: callId, at: context.now() });
      return {
        type: 'tool.settled',
        corr: callId,
        data: { effectId: request.effectId, callId, name, ...outcome, elapsedMs: context.elapsedMs() },
        ...(deferred.length > 0 ? { facts: deferred } : {}),
      };
    },
  };
};
