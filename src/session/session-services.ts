import type { Budgets } from '../../models/budgets.js';
import type { ModelOptions } from '../../models/model-contract.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { createCallModelExecutor } from '../effects/call-model.js';
import type { EffectExecutors } from '../effects/effect.js';
import { createExecuteToolExecutor } from '../effects/execute-tool.js';
import { ConversationView } from '../projections/conversation.js';
import type { ModelProvider } from '../providers/provider.js';
import type { PermissionPolicy } from '../policy/permission-policy.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { SessionToolState } from '../tools/session-tool-state.js';
import type { AnyToolDefinition } from '../tools/tool.js';
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
  snapshotEvery: number;
  observationLimit?: number;
  permissions: PermissionPolicy;
  sandbox: SandboxPolicy;
}

/** The per-session wiring: effect executors, the conversation views they read and the tool state. */
export interface SessionWiring {
  executors: EffectExecutors;
  /** Baselines, shown artifacts and session grants, folded from the log. */
  toolState: SessionToolState;
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
  const toolState = new SessionToolState();
  const sessionTools = new Set(tools);
  const visibility = (tool: AnyToolDefinition) => (sessionTools.has(tool.name) ? services.permissions.visibility(tool) : { visible: false as const, reason: 'it is not one of this session\'s tools' });
  const descriptions = services.registry.describe(tools.filter((name) => {
    const tool = services.registry.get(name);
    return tool !== undefined && visibility(tool).visible;
  }));
  return {
    toolState,
    executors: {
      callModel: createCallModelExecutor({
        provider: services.provider,
        options: services.modelOptions,
        source: {
          messages: (actor) => viewOf(actor).messages,
          tools: () => descriptions,
          role: (actor) => (actor === rootPath ? undefined : actor.split('/').pop()),
        },
      }),
      executeTool: createExecuteToolExecutor({
        registry: services.registry,
        policy: services.permissions,
        visibility,
        state: toolState,
        workspace: services.workspace,
        blobs: services.store.blobs,
        sandbox: services.sandbox,
        ...(services.observationLimit === undefined ? {} : { observationLimit: services.observationLimit }),
      }),
    },
    observe: (record) => {
      viewOf(record.actor).add(record);
      toolState.observe(record);
    },
  };
};
