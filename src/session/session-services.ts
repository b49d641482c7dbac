import type { Budgets } from '../../models/budgets.js';
import type { ContextProjected } from '../../models/context.records.js';
import type { ModelOptions } from '../../models/model-contract.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { artifactRef, blake3Hex, blobBytes } from '../../stores/blob-hash.js';
import { createCallModelExecutor, type ModelCallSource } from '../effects/call-model.js';
import type { RetryPolicy } from '../effects/model-retry.js';
import type { EffectExecutors } from '../effects/effect.js';
import { createExecuteToolExecutor } from '../effects/execute-tool.js';
import type { VerificationClassifier } from '../effects/verification.js';
import { maxCompactionLevel } from '../projections/context-budget.js';
import { projectModelInput, type ContextPolicyOptions } from '../projections/context-policy.js';
import { contextProjection, type ContextViewOptions } from '../projections/context.view.js';
import { memoryProjection } from '../projections/memory.view.js';
import { reducerOf } from '../projections/projection.js';
import { estimateTokenCounter, tokenCounterFor, type TokenCounter } from '../projections/token-counter.js';
import type { ModelProvider } from '../providers/provider.js';
import type { PermissionPolicy } from '../policy/permission-policy.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { SessionToolState } from '../tools/session-tool-state.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { Workspace } from '../tools/workspace.js';
import { rootPath } from '../host/actor-tree.js';
import { createCallSpecFactory } from '../typestate/call-spec.js';
import { defaultObservationLimit } from '../tools/observation.js';
import type { MemoryServices, SessionMemory } from '../memory/session-memory.js';

/** Everything a session needs from its environment; `createRein` builds it once and shares it. */
export interface SessionServices {
  store: EventStore;
  provider: ModelProvider;
  registry: ToolRegistry;
  workspace: Workspace;
  budgets: Budgets;
  clock: () => number;
  systemPrompt: string;
  modelOptions: ModelOptions;
  /** Retry budget for model calls (defaults: `defaultRetryPolicy`). */
  retry: Partial<RetryPolicy>;
  /** The runtime's randomness (backoff jitter); machines never see it. */
  random: () => number;
  snapshotEvery: number;
  parallelTools: number;
  observationLimit?: number;
  /** The context policy's options (window, tail length, phase shares, memory scope). */
  context?: ContextPolicyOptions;
  /** The context view's options (which tools read and change files, capacities). */
  contextView?: ContextViewOptions;
  classifyVerification?: VerificationClassifier;
  /** Receives every XState inspection event of the session's actors (the Stately inspector, live). */
  inspect?: (event: unknown) => void;
  permissions: PermissionPolicy;
  sandbox: SandboxPolicy;
  /** Governed memory (the workspace's governance stream, scope, promotion policy); absent: no memory. */
  memory?: MemoryServices;
}

/** The per-session wiring: effect executors, the views the model call reads, and the tool state. */
export interface SessionWiring {
  executors: EffectExecutors;
  /** What the model call reads: the context policy over this session's views (`prepare`, `compact`). */
  source: ModelCallSource;
  /** Baselines, shown artifacts and session grants, folded from the log. */
  toolState: SessionToolState;
  /** Fold a durable record into the views (called for every record, in seq order). */
  observe(record: RecordEnvelope): void;
}

/**
 * Build the executors for one session whose visible tools are `tools`. The model call's input is projected each
 * round by the context policy from the context view (folded from this session's records with the same reducer a
 * rebuild uses) and, with `memory`, the governance store's view (re-read before a model call) and this session's
 * own candidates; each projection's exact input is stored as a blob and recorded as `context.projected`.
 */
export const wireSession = (services: SessionServices, tools: readonly string[], memory?: SessionMemory): SessionWiring => {
  const toolState = new SessionToolState();
  const sessionTools = new Set(tools);
  const visibility = (tool: AnyToolDefinition) => (sessionTools.has(tool.name) ? services.permissions.visibility(tool) : { visible: false as const, reason: 'it is not one of this session\'s tools' });
  const projection = contextProjection(services.contextView);
  const reduceContext = reducerOf(projection);
  const reduceMemory = reducerOf(memoryProjection);
  let context = projection.initial();
  let ownMemory = memoryProjection.initial();
  const memoryViews = () => (memory ? memory.views() : { session: ownMemory, governance: ownMemory });
  const compaction = new Map<string, number>();
  const descriptions = services.registry.describe(tools.filter((name) => {
    const tool = services.registry.get(name);
    return tool !== undefined && visibility(tool).visible;
  }));
  const model = services.provider.model;
  let counter: TokenCounter = estimateTokenCounter;
  const counterReady = tokenCounterFor(model).then((resolved) => {
    counter = resolved;
  });
  const levelOf = (actor: string): number => Math.max(compaction.get(actor) ?? 0, context.actors[actor]?.compactionLevel ?? 0);
  const project = (actor: string) =>
    projectModelInput({ view: context, actor, memory: memoryViews().governance, ...(memory ? { sessionMemory: memoryViews().session } : {}), systemPrompt: services.systemPrompt, tools: descriptions, counter, ...(services.context ? { options: services.context } : {}), ...(model === undefined ? {} : { model }), now: services.clock(), compactionLevel: levelOf(actor) });
  const callSpecOf = createCallSpecFactory({
    provider: services.provider.name,
    model: services.provider.model ?? 'unknown',
    tools: descriptions,
    catalog: services.registry.describe(),
    parallelTools: services.parallelTools,
    observationLimit: services.observationLimit ?? defaultObservationLimit,
    sandbox: services.sandbox,
    permissions: services.permissions,
    maxTurns: services.budgets.maxTurns,
  });
  const source: ModelCallSource = {
    callSpec: callSpecOf,
    messages: (actor) => project(actor).messages,
    tools: () => descriptions,
    role: (actor) => (actor === rootPath ? undefined : actor.split('/').pop()),
    async prepare({ actor, turn, effectId, attempt }) {
      await counterReady;
      // Candidates extracted from the last step are written first: this session's own facts must beat memory.
      await memory?.settled();
      await memory?.refresh();
      const { messages, ...ledger } = project(actor);
      const bytes = blobBytes(JSON.stringify({ messages, tools: descriptions }));
      const input = artifactRef(await blake3Hex(bytes));
      const data: ContextProjected = { effectId, turn, attempt, ...(model === undefined ? {} : { model }), ...ledger, input };
      // The exact input travels with the fact into the settling step's batch: durable exactly when the step is.
      return { messages, tools: descriptions, facts: [{ type: 'context.projected', data }], blobs: [bytes] };
    },
    async compact(actor) {
      const level = levelOf(actor);
      if (level >= maxCompactionLevel) return false;
      compaction.set(actor, level + 1);
      return true;
    },
  };
  return {
    source,
    toolState,
    executors: {
      callModel: createCallModelExecutor({ provider: services.provider, options: services.modelOptions, retry: services.retry, random: services.random, source }),
      executeTool: createExecuteToolExecutor(
        {
          registry: services.registry,
          policy: services.permissions,
          visibility,
          state: toolState,
          workspace: services.workspace,
          blobs: services.store.blobs,
          sandbox: services.sandbox,
          ...(services.observationLimit === undefined ? {} : { observationLimit: services.observationLimit }),
          ...(memory ? { memory } : {}),
        },
        services.classifyVerification ? { classifyVerification: services.classifyVerification } : {},
      ),
    },
    observe: (record) => {
      context = reduceContext(context, record);
      if (memory) memory.observe(record);
      else ownMemory = reduceMemory(ownMemory, record);
      toolState.observe(record);
    },
  };
};
