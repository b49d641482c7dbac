import type { CallSpec } from '../../models/call-spec.js';
import type { ModelToolDescription } from '../../models/model-contract.js';
import type { DenialSource, PermissionMode } from '../../models/permission.records.js';
import type { OutputContract } from '../../models/report-contracts.js';
import { reportTool } from '../../machines/session.machine.js';
import type { ActorRights, DelegationScope } from '../delegation/actor-rights.js';
import type { ToolMemoryProvider } from '../tools/tool-memory.js';
import type { DelegationDirectory } from '../delegation/delegation-directory.js';
import type { DelegationConfig } from '../delegation/roles.js';
import { rootPath } from '../host/actor-tree.js';
import { PermissionPolicy } from '../policy/permission-policy.js';
import type { PermissionRule } from '../policy/permission-rules.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { defaultObservationLimit } from '../tools/observation.js';
import type { SessionToolState } from '../tools/session-tool-state.js';
import { submitReportTool } from '../tools/submit-report.tool.js';
import type { PipelineEnvironment } from '../tools/tool-pipeline.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { Workspace } from '../tools/workspace.js';
import type { BlobStore } from '../../stores/blob-store.js';
import { createCallSpecFactory, mutationPolicyDigestOf } from '../typestate/call-spec.js';
import type { CapabilityDeriver, VisibleSet } from '../capabilities/capability-deriver.js';
import type { AgentCapabilities } from '../capabilities/agent-capabilities.js';
import { capabilityToolNames } from '../capabilities/session-capabilities.js';
import type { HookKernel } from '../hooks/hook-kernel.js';

/**
 * Everything one agent of a session works with: its rights, its tool pipeline, what the model is shown, its CallSpecs.
 * With capabilities, `rights.tools`, `descriptions` and the CallSpec follow the agent's recorded visible set.
 */
export interface ActorWiring {
  readonly rights: ActorRights;
  environment: PipelineEnvironment;
  readonly descriptions: ModelToolDescription[];
  callSpec(effectId: string): CallSpec;
  /** The mutation policy digest this agent's turns run under now (its CallSpecs carry it). */
  mutationPolicyDigest: string;
}

/** The session's capabilities as the wiring needs them: each agent's recorded visible set, and per-agent search. */
export interface WiringCapabilities {
  deriver: CapabilityDeriver;
  agent(actor: string): AgentCapabilities;
}

export interface ActorWiringOptions {
  registry: ToolRegistry;
  permissions: PermissionPolicy;
  sandbox: SandboxPolicy;
  workspace: Workspace;
  blobs: BlobStore;
  state: SessionToolState;
  directory: DelegationDirectory;
  delegation: DelegationConfig;
  /** The session's tools (from `session.created`). */
  tools: readonly string[];
  provider: { name: string; model?: string };
  parallelTools: number;
  /** Most tool calls of one reply that run (the CallSpec's `maxBranches`). */
  maxParallelToolCalls?: number;
  maxTurns: number;
  observationLimit?: number;
  /** The session's governed memory for the memory tools (every agent proposes into the session's ledger). */
  memory?: ToolMemoryProvider;
  /** The visible set per round (absent, or for a session without a catalog: the session's tools, as before). */
  capabilities?: WiringCapabilities;
  /** The hook kernel every agent's calls pass through (children's included). */
  hooks?: HookKernel;
}

/** Children ask before delegating further: nested delegation needs a person's approval (or an answer given in advance). */
const askBeforeNesting: PermissionRule = { action: 'ask', tool: 'delegate_task', source: 'rule' };

/** How many visible sets' descriptions each registry keeps (a session's sets change rarely; children share theirs). */
const describedSetsKept = 32;

const cached = <V>(cache: Map<string, V>, key: string, make: () => V): V => {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
};

/**
 * Per-agent wiring: the root agent sees the session's tools under the session's policy; a child (known from the
 * log through the delegation directory, never from its path) sees its task's tools plus `submit_report` (whose
 * schema is its output contract) under its own, never wider, permission mode — the parent's rules and approve-all
 * setting, plus `ask delegate_task`. Registries, policies, descriptions and CallSpec factories are shared between
 * children with the same contract, mode and tools, so an idle child costs one small object.
 */
export const createActorWiring = (options: ActorWiringOptions): { of(actor: string): ActorWiring; forget(actor: string): void } => {
  const observationLimit = options.observationLimit ?? defaultObservationLimit;
  const policies = new Map<PermissionMode, PermissionPolicy>();
  const childPolicy = (mode: PermissionMode) =>
    cached(policies, mode, () => new PermissionPolicy({ mode, rules: [...options.permissions.rules, askBeforeNesting], approveAll: options.permissions.approveAll }));
  const registries = new Map<string, ToolRegistry>();
  // A child's registry sits on the session's: it sees the session's tools as they are now (MCP tools included).
  const registryFor = (contract: OutputContract) => cached(registries, `${contract.format}:${contract.requiredFields.join(',')}`, () => new ToolRegistry([submitReportTool(contract)], { parent: options.registry }));
  const capabilities = options.capabilities;
  /** The agent's recorded visible set, when the session derives one. */
  const visibleOf = (actor: string): VisibleSet | undefined => (capabilities?.deriver.active ? capabilities.deriver.visible(actor) : undefined);
  /**
   * Descriptions per registry and visible set, keyed by the set's content (its digest covers each tool's description
   * and schema; the names give the order shown): the children of a delegation that see the same tools share one list,
   * so its JSON and token counts are computed once (tools-json), not once per child. The newest few sets are kept.
   */
  const dynamicDescriptions = new WeakMap<ToolRegistry, { byContent: Map<string, ModelToolDescription[]>; bySet: WeakMap<VisibleSet, ModelToolDescription[]> }>();
  const describeVisible = (registry: ToolRegistry, set: VisibleSet): ModelToolDescription[] => {
    let sets = dynamicDescriptions.get(registry);
    if (!sets) dynamicDescriptions.set(registry, (sets = { byContent: new Map(), bySet: new WeakMap() }));
    // A recorded set is never changed (a new round's set is a new object): asked several times a round, it is looked up
    // by identity, and by content (a joined key) only the first time.
    let described = sets.bySet.get(set);
    if (described) return described;
    const key = `${set.digest}|${set.names.join(',')}`;
    described = sets.byContent.get(key);
    if (!described) {
      described = registry.describe(set.names);
      if (sets.byContent.size >= describedSetsKept) sets.byContent.delete(sets.byContent.keys().next().value!);
      sets.byContent.set(key, described);
    }
    sets.bySet.set(set, described);
    return described;
  };
  // The mutation policy digest per policy (the sandbox is the session's): every child of a mode shares its policy, so
  // a delegation digests it once, not once per task and again per child.
  const policyDigests = new WeakMap<PermissionPolicy, string>();
  const policyDigestOf = (policy: PermissionPolicy): string => {
    let digest = policyDigests.get(policy);
    if (digest === undefined) policyDigests.set(policy, (digest = mutationPolicyDigestOf(policy, options.sandbox)));
    return digest;
  };
  const specFactories = new Map<string, (effectId: string) => CallSpec>();
  const stages = options.hooks?.guardrailStages() ?? [];
  const guardrails = stages.length > 0 ? { stages, ids: stages.flatMap((stage) => options.hooks!.hooksFor(`guardrail.${stage}`).map((hook) => hook.id)) } : undefined;
  const describeCache = new Map<string, ModelToolDescription[]>();
  const scopeOf = (rights: ActorRights): DelegationScope => ({
    parent: rights,
    config: options.delegation,
    isVisible: (mode, name) => {
      const tool = options.registry.get(name);
      return tool !== undefined && childPolicy(mode).visibility(tool).visible;
    },
    policyDigest: (mode) => policyDigestOf(childPolicy(mode)),
    observationLimit,
  });
  const environmentOf = (registry: ToolRegistry, policy: PermissionPolicy, tools: ReadonlySet<string>, rights: ActorRights): PipelineEnvironment => ({
    registry,
    policy,
    visibility: (tool) => {
      const set = visibleOf(rights.path);
      if (set) {
        const byPolicy = policy.visibility(tool);
        if (set.digests.has(tool.name)) return byPolicy;
        if (!tools.has(tool.name) && !tool.name.startsWith('mcp__') && !capabilityToolNames.has(tool.name)) return { visible: false as const, reason: rights.depth === 0 ? 'it is not one of this session\'s tools' : `it is not one of this ${rights.role ?? 'child'} agent's tools` };
        if (!byPolicy.visible) return byPolicy;
        return { visible: false as const, reason: 'it is not in your tool list this turn (find deferred tools with tool_search; they become callable from your next turn)' };
      }
      return tools.has(tool.name) ? policy.visibility(tool) : { visible: false as const, reason: rights.depth === 0 ? 'it is not one of this session\'s tools' : `it is not one of this ${rights.role ?? 'child'} agent's tools` };
    },
    state: options.state,
    workspace: options.workspace,
    blobs: options.blobs,
    sandbox: options.sandbox,
    observationLimit,
    delegation: scopeOf(rights),
    ...(options.memory ? { memory: options.memory } : {}),
    ...(capabilities ? { capabilities: capabilities.agent(rights.path) } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  /** The agent's tools its policy hides (plan mode, a tool-wide deny), by who hides them. */
  const hiddenOf = (registry: ToolRegistry, policy: PermissionPolicy, names: Iterable<string>): Record<string, DenialSource> => {
    const hidden: Record<string, DenialSource> = {};
    for (const name of names) {
      const tool = registry.get(name);
      const visibility = tool ? policy.visibility(tool) : undefined;
      if (visibility && !visibility.visible) hidden[name] = visibility.denial;
    }
    return hidden;
  };
  const specFor = (key: string, registry: ToolRegistry, descriptions: ModelToolDescription[], policy: PermissionPolicy, maxTurns: number, names: Iterable<string>) =>
    cached(specFactories, `${key}|${maxTurns}`, () =>
      createCallSpecFactory({ provider: options.provider.name, model: options.provider.model ?? 'unknown', tools: descriptions, catalog: registry.describe(), hidden: hiddenOf(registry, policy, names), parallelTools: options.parallelTools, ...(options.maxParallelToolCalls === undefined ? {} : { maxBranches: options.maxParallelToolCalls }), observationLimit, sandbox: options.sandbox, permissions: policy, maxTurns, ...(guardrails ? { guardrails } : {}) }),
    );

  const sessionTools = new Set(options.tools.filter((name) => name !== reportTool));
  const rootNames = options.tools.filter((name) => {
    const tool = options.registry.get(name);
    return tool !== undefined && name !== reportTool && options.permissions.visibility(tool).visible;
  });
  const rootDescriptions = options.registry.describe(rootNames);
  const rootRights: ActorRights = {
    path: rootPath,
    depth: 0,
    get tools() {
      return visibleOf(rootPath)?.names.filter((name) => name !== reportTool) ?? rootNames;
    },
    mode: options.permissions.mode,
  };
  const rootSpec = specFor('root', options.registry, rootDescriptions, options.permissions, options.maxTurns, sessionTools);
  const rootWiring: ActorWiring = {
    rights: rootRights,
    environment: environmentOf(options.registry, options.permissions, sessionTools, rootRights),
    get descriptions() {
      const set = visibleOf(rootPath);
      return set ? describeVisible(options.registry, set) : rootDescriptions;
    },
    callSpec: (effectId) => {
      const set = visibleOf(rootPath);
      return set ? specFor(`root|${set.digest}`, options.registry, describeVisible(options.registry, set), options.permissions, options.maxTurns, options.registry.names())(effectId) : rootSpec(effectId);
    },
    mutationPolicyDigest: policyDigestOf(options.permissions),
  };
  const nothingRights: ActorRights = { path: 'unknown', depth: 0, tools: [], mode: options.permissions.mode };
  const nothing: ActorWiring = { rights: nothingRights, environment: environmentOf(options.registry, options.permissions, new Set(), nothingRights), descriptions: [], callSpec: rootSpec, mutationPolicyDigest: policyDigestOf(options.permissions) };

  const children = new Map<string, ActorWiring>();
  /** The wired agents below each path (`root/delegation-1` → its children, theirs, …): an ended child forgets its own. */
  const below = new Map<string, Set<string>>();
  /** Drop one wiring and its entries in `below` (its own and its ancestors'). */
  const drop = (actor: string): void => {
    if (!children.delete(actor)) return;
    below.delete(actor);
    for (let index = actor.lastIndexOf('/'); index > 0; index = actor.lastIndexOf('/', index - 1)) {
      const ancestor = actor.slice(0, index);
      const paths = below.get(ancestor);
      paths?.delete(actor);
      if (paths?.size === 0) below.delete(ancestor);
    }
  };
  const of = (actor: string): ActorWiring => {
    if (actor === rootPath) return rootWiring;
    const entry = options.directory.get(actor);
    if (!entry) {
      drop(actor);
      return nothing;
    }
    const known = children.get(actor);
    if (known) return known;
    const { task } = entry;
    const registry = registryFor(task.contract);
    const policy = childPolicy(task.permissionMode);
    const names = [...task.tools, reportTool];
    const key = `${task.contract.format}:${task.contract.requiredFields.join(',')}|${task.permissionMode}|${names.join(',')}`;
    const descriptions = cached(describeCache, key, () => registry.describe(names));
    const rights: ActorRights = {
      path: actor,
      depth: task.depth,
      role: task.role,
      get tools() {
        return visibleOf(actor)?.names.filter((name) => name !== reportTool) ?? task.tools;
      },
      mode: task.permissionMode,
      contract: task.contract,
    };
    const staticSpec = specFor(key, registry, descriptions, policy, task.budgets.maxTurns, names);
    const wiring: ActorWiring = {
      rights,
      environment: environmentOf(registry, policy, new Set(names), rights),
      get descriptions() {
        const set = visibleOf(actor);
        return set ? describeVisible(registry, set) : descriptions;
      },
      callSpec: (effectId) => {
        const set = visibleOf(actor);
        return set ? specFor(`${key}|${set.digest}`, registry, describeVisible(registry, set), policy, task.budgets.maxTurns, names)(effectId) : staticSpec(effectId);
      },
      mutationPolicyDigest: policyDigestOf(policy),
    };
    children.set(actor, wiring);
    for (let index = actor.lastIndexOf('/'); index > 0; index = actor.lastIndexOf('/', index - 1)) {
      const ancestor = actor.slice(0, index);
      let paths = below.get(ancestor);
      if (!paths) below.set(ancestor, (paths = new Set()));
      paths.add(actor);
    }
    return wiring;
  };
  return {
    of,
    /** Drop an ended child's wiring (and its own children's), without looking at any other agent's. */
    forget(actor) {
      for (const path of [...(below.get(actor) ?? [])]) drop(path);
      drop(actor);
    },
  };
};
