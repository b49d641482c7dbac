import type { BlobStore } from '../../stores/blob-store.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { runToolCall } from '../tools/tool-runtime.js';
import type { Workspace } from '../tools/workspace.js';
import type { EffectExecutor, FactDraft } from './effect.js';

export interface ExecuteToolOptions {
  registry: ToolRegistry;
  workspace: Workspace;
  blobs: BlobStore;
  observationLimit?: number;
}

/**
 * Executes `executeTool` through the tool pipeline. For tools that change anything, `tool.started` is appended
 * (synced) right before the tool runs, so a crash mid-tool leaves evidence that it may have run; for read-only
 * tools it is written with the settling step, stamped with the time the tool actually started.
 */
export const createExecuteToolExecutor = ({ registry, workspace, blobs, observationLimit }: ExecuteToolOptions): EffectExecutor => {
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
      const outcome = await runToolCall(
        registry,
        { name, arguments: args },
        { sessionId: context.sessionId, callId, workspace, blobs, signal: context.signal, readBaselines },
        {
          ...(observationLimit === undefined ? {} : { observationLimit }),
          // A tool that changes something leaves durable evidence before it runs; a read-only one needs none.
          beforeExecute: async () => {
            if (readOnly) deferred.push({ ...started, at: context.now() });
            else await context.recordFacts([started], { sync: true });
          },
        },
      );
      return {
        type: 'tool.settled',
        corr: callId,
        data: { effectId: request.effectId, callId, name, ...outcome, elapsedMs: context.elapsedMs() },
        ...(deferred.length > 0 ? { facts: deferred } : {}),
      };
    },
  };
};
