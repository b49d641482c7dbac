import type { Budgets } from '../../models/budgets.js';
import type { ModelOptions } from '../../models/model-contract.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { createCallModelExecutor } from '../effects/call-model.js';
import type { RetryPolicy } from '../effects/model-retry.js';
import type { EffectExecutors } from '../effects/effect.js';
import { createExecuteToolExecutor } from '../effects/execute-tool.js';
import { ConversationView } from '../projections/conversation.js';
import type { ModelProvider } from '../providers/provider.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { Workspace } from '../tools/workspace.js';
import { rootPath } from '../host/actor-tree.js';

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
}

/** The per-session wiring: effect executors and the conversation views they read. */
export interface SessionWiring {
  executors: EffectExecutors;
  /** Fold a durable record into the views (called for every record, in seq order). */
  observe(record: RecordEnvelope): void;
}

/** Build the executors for one session whose visible tools are `tools`. */
export const wireSession = (services: SessionServices, tools: readonly string[]): SessionWiring => {
  const views = new Map<string, ConversationView>();
  const viewOf = (actor: string): ConversationView => {
    let view = views.get(actor);
    if (!view) {
      view = new ConversationView(actor, services.systemPrompt);
      views.set(actor, view);
    }
    return view;
  };
  const descriptions = services.registry.describe(tools);
  return {
    executors: {
      callModel: createCallModelExecutor({
        provider: services.provider,
        options: services.modelOptions,
        retry: services.retry,
        random: services.random,
        source: {
          messages: (actor) => viewOf(actor).messages,
          tools: () => descriptions,
          role: (actor) => (actor === rootPath ? undefined : actor.split('/').pop()),
        },
      }),
      executeTool: createExecuteToolExecutor({
        registry: services.registry,
        workspace: services.workspace,
        blobs: services.store.blobs,
        ...(services.observationLimit === undefined ? {} : { observationLimit: services.observationLimit }),
      }),
    },
    observe: (record) => viewOf(record.actor).add(record),
  };
};
