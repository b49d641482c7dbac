import { statSync } from 'node:fs';
import { defaultBudgets } from '../models/budgets.js';
import { checkReinOptions } from './rein-options-check.js';
import { defaultPrices } from '../models/price-table.js';
import type { ReinOptions } from './rein-options.js';
import { workspaceInsideConfigHome } from './policy/protected-paths.js';
import type { SessionServices } from './session/session-services.js';
import { defaultSystemPrompt, promptFlavorOf } from './session/system-prompt.js';
import { PermissionPolicy } from './policy/permission-policy.js';
import { defaultSandboxPolicy, type SandboxPolicy } from './policy/sandbox-policy.js';
import { mergeSandboxConfig, SandboxConfig } from './policy/sandbox-config.js';
import { sandboxEnforcement } from './policy/sandbox-probe.js';
import { ReinError } from './host/host-errors.js';
import { builtinTools } from './tools/builtin-tools.js';
import { ToolRegistry } from './tools/tool-registry.js';
import { Workspace } from './tools/workspace.js';
import { loadBlake3 } from './util/blake3.js';
import { GovernanceLog } from './memory/governance-log.js';
import { resolveMemoryScope } from './memory/memory-scope.js';
import { delegationConfigOf } from './delegation/roles.js';
import type { CapabilityServices } from './capabilities/session-capabilities.js';
import { discoverSkills } from './skills/skill-discovery.js';
import { parseMcpServers, type McpServerSpec } from './mcp/mcp-config.js';
import { SessionMcp } from './mcp/session-mcp.js';
import { CapabilityRegistry } from './plugins/capability-registry.js';
import { PluginHost } from './plugins/plugin-host.js';
import { HookKernel } from './hooks/hook-kernel.js';
import { commandHookRegistrations } from './hooks/command-hooks.js';
import type { SandboxScope } from './tools/command-launch.js';
import { CaptureConfig } from './changes/capture-config.js';

/** Providers that play recorded or scripted outputs: every built-in tool is offered to them (scripts may call any). */
const embeddedProviders: ReadonlySet<string> = new Set(['scripted', 'recorded']);

/** The stat of `path`, or undefined when there is nothing there or it cannot be asked. */
const statIfAny = (path: string): ReturnType<typeof statSync> => {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

/** The capability side of a harness: discovery policy options, skill discovery, MCP servers. */
const capabilityServicesOf = (options: ReinOptions, scope: SandboxScope, toolNames: readonly string[]): CapabilityServices => {
  const workspace = scope.workspace.root;
  const skills = options.skills;
  const servers = mcpSpecsOf(options.mcpServers);
  const known = new Set([...toolNames, 'tool_search', 'skill']);
  return {
    options: options.capabilities === false ? {} : (options.capabilities ?? {}),
    ...(skills === false ? {} : { discoverSkills: () => discoverSkills({ workspace, options: skills ?? {}, known: (name) => known.has(name) || name.startsWith('mcp__') }) }),
    ...(servers.length > 0 ? { mcp: () => new SessionMcp({ servers, workspace, sandbox: scope }) } : {}),
  };
};

/** The host's MCP servers as specs; a malformed entry is `CONFIG_INVALID` (nothing starts). */
const mcpSpecsOf = (servers: ReinOptions['mcpServers']): McpServerSpec[] => {
  if (!servers) return [];
  const parsed = parseMcpServers(servers, { kind: 'host' });
  const problem = parsed.problems[0];
  if (problem) throw new ReinError('CONFIG_INVALID', `mcpServers.${problem.name}: ${problem.reason}`);
  return parsed.servers;
};

/** The full sandbox policy for `createRein({ sandbox })`: the shared fields checked like `rein.config.json`'s. */
const sandboxPolicyOf = (given: Partial<SandboxPolicy> = {}): SandboxPolicy => {
  const shared = SandboxConfig.safeParse({ mode: given.mode, network: given.network, allowedHosts: given.allowedHosts === undefined ? undefined : [...given.allowedHosts], loginShell: given.loginShell, maxProcesses: given.maxProcesses, maxMemoryMb: given.maxMemoryMb, maxTmpMb: given.maxTmpMb });
  if (!shared.success) throw new ReinError('USAGE', `createRein({ sandbox }): ${shared.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return { ...defaultSandboxPolicy, ...given, ...mergeSandboxConfig(shared.data) };
};

/** `createRein({ capture })` checked as `rein.config.json`'s `capture` is (`USAGE` naming the field). */
const captureOptionsOf = (given: unknown): CaptureConfig => {
  const parsed = CaptureConfig.safeParse(given ?? {});
  if (!parsed.success) throw new ReinError('USAGE', `createRein({ capture }): ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return parsed.data;
};

/** What `composeServices` built: every session's services, and the parts the harness itself answers from. */
export interface ComposedServices {
  services: SessionServices;
  workspace: Workspace;
  clock: () => number;
  governance: GovernanceLog;
  capabilities: CapabilityRegistry;
  pluginHost: PluginHost;
  hooks: HookKernel;
}

/**
 * Check `createRein`'s options (`USAGE` / `CONFIG_INVALID` naming the field), probe the sandbox once, open the
 * workspace, resolve the memory scope, load the plugins and their hooks, and compose the services every session of
 * the harness shares, with each option's default filled in.
 */
export const composeServices = async (options: ReinOptions): Promise<ComposedServices> => {
  checkReinOptions(options as Parameters<typeof checkReinOptions>[0], [...(options.tools ?? builtinTools()).map((tool) => tool.name), 'submit_report', 'delegate_task', 'tool_search', 'skill', 'memory_read', 'memory_write', 'read_artifact']);
  await loadBlake3();
  const sandbox = sandboxPolicyOf(options.sandbox);
  // The start-up probe: whether bubblewrap can build a sandbox here is found once, before any session runs.
  await sandboxEnforcement(sandbox);
  // Synchronous: one stat, without the thread-pool hop an async one costs every harness (~35 µs of CPU).
  const found = statIfAny(options.workspace);
  if (!found?.isDirectory()) throw new ReinError('USAGE', `createRein({ workspace }): ${options.workspace} ${found ? 'is not a directory' : 'does not exist'}`);
  const unsafe = workspaceInsideConfigHome(options.workspace);
  if (unsafe) throw new ReinError('USAGE', unsafe);
  const workspace = await Workspace.open(options.workspace, options.protectedPaths ? { protectedPaths: options.protectedPaths } : {});
  const clock = options.clock ?? Date.now;
  const memoryOptions = options.memory === false ? undefined : (options.memory ?? {});
  const scope = memoryOptions ? await resolveMemoryScope(workspace.root, memoryOptions.scope) : undefined;
  const governance = new GovernanceLog(options.store, { clock, ...(options.newRecordId ? { newId: options.newRecordId } : {}) });
  const context = scope && !options.context?.memory ? { ...options.context, memory: { workspace: scope.workspace, repo: scope.repo, ...(scope.branch ? { branch: scope.branch } : {}), ...(scope.user ? { user: scope.user } : {}) } } : options.context;
  // apply_patch: for the embedded providers always, for a real model when its settings ask (`applyPatch`).
  const baseTools = options.tools ?? builtinTools({ applyPatch: options.applyPatch ?? embeddedProviders.has(options.provider.name) });
  const capabilities = new CapabilityRegistry(new Set(baseTools.map((tool) => tool.name)));
  const pluginHost = new PluginHost({ workspace: workspace.root, registry: capabilities, clock, ...(options.pluginPolicy ? { policy: options.pluginPolicy } : {}) });
  for (const entry of options.plugins ?? []) await pluginHost.load('setup' in entry ? { source: 'host', plugin: entry } : entry);
  const hooks = new HookKernel([...capabilities.hookRegistrations(), ...commandHookRegistrations(options.hooks, { workspace: workspace.root, sandbox: { policy: sandbox, workspace } })]);
  const services: SessionServices = {
    store: options.store,
    provider: options.provider,
    ...(options.fallbacks && options.fallbacks.length > 0 ? { fallbacks: options.fallbacks } : {}),
    registry: new ToolRegistry([...baseTools, ...capabilities.toolDefinitions()]),
    hooks,
    ...(pluginHost.plugins().length > 0 ? { plugins: pluginHost } : {}),
    workspace,
    budgets: { ...defaultBudgets, ...options.budgets },
    prices: { ...defaultPrices, ...options.prices },
    clock,
    systemPrompt: options.systemPrompt ?? defaultSystemPrompt(workspace.root, promptFlavorOf(options.provider.name)),
    modelOptions: options.modelOptions ?? {},
    retry: options.retry ?? {},
    random: options.random ?? Math.random,
    snapshotEvery: options.snapshotEvery ?? 500,
    parallelTools: options.parallelTools ?? 4,
    ...(options.newRecordId ? { newRecordId: options.newRecordId } : {}),
    ...(options.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: options.maxParallelToolCalls }),
    ...(options.abandonGraceMs === undefined ? {} : { abandonGraceMs: options.abandonGraceMs }),
    ...(options.effectGate ? { effectGate: options.effectGate } : {}),
    ...(options.observationLimit === undefined ? {} : { observationLimit: options.observationLimit }),
    ...(context ? { context } : {}),
    ...(options.contextView ? { contextView: options.contextView } : {}),
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    ...(options.environment === undefined ? {} : { environment: options.environment }),
    ...(options.classifyVerification ? { classifyVerification: options.classifyVerification } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    permissions: new PermissionPolicy(options.permissions),
    sandbox,
    ...(memoryOptions && scope ? { memory: { governance, scope, autoPromote: memoryOptions.autoPromote ?? true, refreshIntervalMs: memoryOptions.refreshIntervalMs ?? 1_000 } } : {}),
    delegation: delegationConfigOf(options.delegation),
    ...(options.capture === false ? {} : { capture: { options: captureOptionsOf(options.capture) } }),
    ...(options.capabilities === false ? {} : { capabilities: capabilityServicesOf(options, { policy: sandbox, workspace }, [...baseTools.map((tool) => tool.name), ...capabilities.toolDefinitions().map((tool) => tool.name)]) }),
  };
  return { services, workspace, clock, governance, capabilities, pluginHost, hooks };
};
