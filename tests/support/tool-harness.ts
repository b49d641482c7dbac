import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import type { FactDraft } from '../../src/effects/effect.js';
import { PermissionPolicy, type PermissionsConfig } from '../../src/policy/permission-policy.js';
import { defaultSandboxPolicy, type SandboxPolicy } from '../../src/policy/sandbox-policy.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { SessionToolState } from '../../src/tools/session-tool-state.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';
import { runToolPipeline, type PipelineCall, type PipelineEnvironment, type PipelineOutcome } from '../../src/tools/tool-pipeline.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { Workspace } from '../../src/tools/workspace.js';
import { loadBlake3 } from '../../src/util/blake3.js';

/** The tool pipeline over a real workspace directory, without a session: for testing tools call by call. */
export interface ToolHarness {
  environment: PipelineEnvironment;
  state: SessionToolState;
  workspace: Workspace;
  /** Facts the pipeline persisted (synced) before a tool that changes something ran. */
  persisted: FactDraft[];
  call(name: string, args: Record<string, unknown>, extra?: Partial<PipelineCall> & { signal?: AbortSignal }): Promise<PipelineOutcome>;
  /** The call's observation text and status (asks are reported as status `ask`, a hand-over as `continue`), with every fact it wrote, persisted or not. */
  run(name: string, args: Record<string, unknown>): Promise<{ status: string; errorCode?: string; observation: string; facts: FactDraft[] }>;
}

/** By default every ask is answered yes, so tests see what the tools do; pass `permissions` to test the policy. */
export const toolHarness = async (root: string, options: { permissions?: PermissionsConfig; sandbox?: Partial<SandboxPolicy>; tools?: AnyToolDefinition[]; protectedPaths?: string[] } = {}): Promise<ToolHarness> => {
  await loadBlake3();
  const workspace = await Workspace.open(root, options.protectedPaths ? { protectedPaths: options.protectedPaths } : {});
  const registry = new ToolRegistry(options.tools ?? builtinTools());
  const policy = new PermissionPolicy(options.permissions ?? { approveAll: true });
  const state = new SessionToolState();
  const environment: PipelineEnvironment = {
    registry,
    policy,
    visibility: (tool) => policy.visibility(tool),
    state,
    workspace,
    blobs: createMemoryEventStore().blobs,
    // No login shell unless a test asks for one: no profile of this machine takes part.
    sandbox: { ...defaultSandboxPolicy, loginShell: false, ...options.sandbox },
  };
  const persisted: FactDraft[] = [];
  let count = 0;
  const call: ToolHarness['call'] = (name, args, extra = {}) => {
    count++;
    const { signal, ...rest } = extra;
    return runToolPipeline(environment, { effectId: `root:e${count}`, callId: `c${count}`, actor: 'root', name, arguments: args, ...rest }, {
      sessionId: 's-test',
      signal: signal ?? new AbortController().signal,
      now: Date.now,
      persist: async (facts) => void persisted.push(...facts),
      progress: () => {},
    });
  };
  return {
    environment,
    state,
    workspace,
    persisted,
    call,
    async run(name, args) {
      const before = persisted.length;
      const outcome = await call(name, args);
      const facts = [...persisted.slice(before), ...outcome.facts];
      if (outcome.kind === 'ask') return { status: 'ask', observation: outcome.request.reason, facts };
      if (outcome.kind === 'continue') return { status: 'continue', observation: outcome.input.type, facts };
      return { status: outcome.outcome.status, ...(outcome.outcome.errorCode ? { errorCode: outcome.outcome.errorCode } : {}), observation: outcome.outcome.observation, facts };
    },
  };
};
