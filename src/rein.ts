import { defer, mergeAll, type Observable } from 'rxjs';
import { checkReinOptions } from './rein-options-check.js';
import { workspaceInsideConfigHome } from './policy/protected-paths.js';
import { defaultBudgets, type Budgets } from '../models/budgets.js';
import type { ReinRecord } from '../models/records.js';
import type { ModelOptions } from '../models/model-contract.js';
import type { EventStore } from '../stores/event-store.js';
import type { RetryPolicy } from './effects/model-retry.js';
import type { ReplayCounts } from './host/replay.js';
import type { ModelProvider } from './providers/provider.js';
import type { ContextPolicyOptions } from './projections/context-policy.js';
import type { ContextViewOptions } from './projections/context.view.js';
import type { VerificationClassifier } from './effects/verification.js';
import { stat } from 'node:fs/promises';
import { hostFileProblem, readHostFile } from './util/read-regular-file.js';
import { resolve as resolvePath } from 'node:path';
import { checkSessionOptions, createSession, newSessionId, type CreateSessionOptions } from './session/start-session.js';
import { submitSession } from './worker/submit-session.js';
import type { QueuedSession } from './worker/queued-session.js';
import { displayEndpoint } from './providers/wire-format.js';
import { forkSession, type ForkOptions } from './session/fork-session.js';
import { replaySession } from './session/replay-session.js';
import { resumeSession, type ResumeOptions, type ResumeReport } from './session/resume-session.js';
import { listSessions, summarizeSession, type SessionSummary } from './session/session-catalog.js';
import type { ReinSession } from './session/session-handle.js';
import { SessionRegistry } from './session/session-registry.js';
import type { SessionServices } from './session/session-services.js';
import { defaultSystemPrompt } from './session/system-prompt.js';
import { PermissionPolicy, type PermissionsConfig } from './policy/permission-policy.js';
import { defaultSandboxPolicy, type SandboxPolicy } from './policy/sandbox-policy.js';
import { mergeSandboxConfig, SandboxConfig } from './policy/sandbox-config.js';
import { sandboxEnforcement } from './policy/sandbox-probe.js';
import { ReinError } from './host/host-errors.js';
import { builtinTools } from './tools/builtin-tools.js';
import type { AnyToolDefinition } from './tools/tool.js';
import { ToolRegistry } from './tools/tool-registry.js';
import { Workspace } from './tools/workspace.js';
import { loadBlake3 } from './util/blake3.js';
import { GovernanceLog } from './memory/governance-log.js';
import { createMemoryGovernance, type MemoryGovernance } from './memory/memory-governance.js';
import { resolveMemoryScope, type MemoryScopeKeys } from './memory/memory-scope.js';

/** Governed long-term memory (README: *Memory governance*). */
export interface MemoryOptions {
  /** Promote approved candidates when a session ends (default true); off, every candidate waits for a person. */
  autoPromote?: boolean;
  /** Override the boundaries memory is scoped to (default: the workspace, its git repository and branch). */
  scope?: Partial<MemoryScopeKeys>;
  /** Re-read the governance stream before a model call at most this often, in ms (default 1,000). */
  refreshIntervalMs?: number;
}
import { delegationConfigOf } from './delegation/roles.js';
import type { LiveTelemetry, TelemetryHandle, TelemetryOptions } from './telemetry/live-telemetry.js';
import type { CapabilityOptions } from './capabilities/catalog.js';
import type { CapabilityServices } from './capabilities/session-capabilities.js';
import { discoverSkills, type SkillOptions } from './skills/skill-discovery.js';
import { parseMcpServers, type McpServerConfig, type McpServerSpec } from './mcp/mcp-config.js';
import { SessionMcp } from './mcp/session-mcp.js';
import { CapabilityRegistry, type CommandDescriptor, type ProviderDescriptor, type ToolDescriptor } from './plugins/capability-registry.js';
import { PluginHost, type PluginSpec, type PluginState } from './plugins/plugin-host.js';
import type { PluginPermission, ReinPlugin } from './plugins/plugin-contract.js';
import { HookKernel } from './hooks/hook-kernel.js';
import { appendFacts } from './host/append-facts.js';
import { rootPath } from './host/root-path.js';
import { commandHookRegistrations, type CommandHooksConfig } from './hooks/command-hooks.js';

export interface ReinOptions {
  /** The event log; `openLevelEventStore` for durable sessions, `createMemoryEventStore` for tests. */
  store: EventStore;
  /** The directory tools may read and write; it must exist. */
  workspace: string;
  provider: ModelProvider;
  /**
   * Providers to fall back to, in order, when `provider` still fails with an availability error (rate limit,
   * overloaded, server error, network, timeout, quota) after its retry budget; each gets its own retry budget.
   */
  fallbacks?: readonly ModelProvider[];
  /** Tools to register (default: the built-in local tools). */
  tools?: readonly AnyToolDefinition[];
  budgets?: Partial<Budgets>;
  systemPrompt?: string;
  modelOptions?: ModelOptions;
  /** Epoch-milliseconds clock used for record times and elapsed time (default `Date.now`). */
  clock?: () => number;
  /** Retry budget for model calls: attempts, backoff and total time (see `defaultRetryPolicy`). */
  retry?: Partial<RetryPolicy>;
  /** Randomness for backoff jitter (default `Math.random`); inject a seeded one for reproducible timing. */
  random?: () => number;
  /** Save a machine snapshot every this many records (default 500; 0 disables). */
  snapshotEvery?: number;
  /** Read-only tool calls of one turn that may run at once (default 4); writes always run alone. */
  parallelTools?: number;
  /** Observations longer than this many characters are truncated into an artifact. */
  observationLimit?: number;
  /** Paths no tool may touch (default: `<workspace>/.rein`); pass the store directory when it lives elsewhere inside. */
  protectedPaths?: readonly string[];
  /** The context policy: window, reserved output, tail length, phase shares, memory scope (README: *The context policy*). */
  context?: ContextPolicyOptions;
  /** Which tools read and change files, for the context view's evidence and freshness (default read / write, edit…). */
  contextView?: ContextViewOptions;
  /** Which tool calls are verifications (default: test commands and tools named like `run_tests`). */
  classifyVerification?: VerificationClassifier;
  /** Receives every XState inspection event of every session's actors (e.g. a Stately inspector's `inspect.next`). */
  inspect?: (event: unknown) => void;
  /** Permission mode and rules (default: mode `default`, no rules: read-only tools run, edits and commands ask). */
  permissions?: PermissionsConfig;
  /**
   * How commands are isolated and limited: `{ mode, network, allowedHosts, loginShell }` as in `rein.config.json`
   * (hosts without a network policy mean `allow-list`), plus the limits of `SandboxPolicy` (timeouts, output caps,
   * env allow-list, …). Default: bubblewrap when it works, network disabled, `bash -c`, 120 s timeout.
   */
  sandbox?: Partial<SandboxPolicy>;
  /** Governed memory (default on); `false` runs without it (the memory tools then report it unavailable). */
  memory?: MemoryOptions | false;
  /**
   * Asked right before each effect (model call, tool, timer) starts; returning an error stops that session's host
   * instead: the effect does not run and nothing more is written. `rein worker` refuses effects once its lease may
   * have lapsed.
   */
  effectGate?: () => Error | undefined;
  /** Delegation limits and roles: `maxDepth` (default 1: only the root agent delegates), `maxFanOut` (default 8), `roles`. */
  delegation?: Parameters<typeof delegationConfigOf>[0];
  /**
   * Export every session as OpenTelemetry GenAI spans to `exporter` (any `SpanExporter`), each span as soon as it
   * ends; OpenTelemetry is loaded only when this is set. See README: *OpenTelemetry*.
   */
  telemetry?: TelemetryOptions;
  /**
   * The discovery policy (`visibleLimit`, default 64; `toolShare`, default 0.25), or `false` for none: sessions then
   * keep a fixed tool list, record no catalog and have no skills, MCP servers or `tool_search` (README: *Capabilities*).
   */
  capabilities?: CapabilityOptions | false;
  /** Agent Skills: extra folders, whether to read `~/.agents/skills` (default on); `false` for none. */
  skills?: SkillOptions | false;
  /**
   * MCP servers, by name, in the shape `.mcp.json` uses (`{ command, args?, env?, cwd? }` or `{ type: "http", url,
   * headers? }`), or an in-process server (`{ type: "in-memory", connect(transport) }`). Each session connects to
   * them when it starts and closes them when it ends (README: *MCP servers*).
   */
  mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /**
   * Plugins to load (README: *Plugins*): a plugin value (`definePlugin(...)`, source `host`) or a spec with its source,
   * config, enablement and trust (what the CLI's loader builds from `.rein-plugins/`, `rein.config.json` and `--plugin`).
   */
  plugins?: ReadonlyArray<ReinPlugin | PluginSpec>;
  /** Command hooks in Claude Code's settings shape (the `hooks` field of `rein.config.json`; README: *Command hooks*). */
  hooks?: CommandHooksConfig;
  /** Plugin policy: permissions no plugin may have; whether `test` plugins may load (only the test runtime sets it). */
  pluginPolicy?: { deniedPermissions?: readonly PluginPermission[]; allowTestSource?: boolean };
}

/** The plugins of a harness: their lifecycle states and what they registered. */
export interface ReinPlugins {
  list(): PluginState[];
  tools(): ToolDescriptor[];
  providers(): ProviderDescriptor[];
  commands(): CommandDescriptor[];
  /** The hook kernel's registrations, in the order they run, point by point (plugin hooks, guardrails, command hooks). */
  hooks(): Array<{ id: string; point: string; kind: 'plugin' | 'command'; order: number; timeoutMs: number; failOpen: boolean }>;
}

/**
 * A harness over one store, workspace, provider and policy (tools, budgets, retry budget); it runs many sessions
 * at once in one process, each with its own step loop and single writer.
 */
export interface Rein {
  readonly store: EventStore;
  readonly workspace: string;
  /** The provider's name, model and endpoint as sessions record them (never a key). */
  readonly provider: { name: string; model?: string; source?: string };
  /** Create a session without starting it (subscribe first, then `send` the task). */
  createSession(options: CreateSessionOptions): Promise<ReinSession>;
  /** Create a session and send its task. */
  startSession(options: CreateSessionOptions): Promise<ReinSession>;
  /**
   * Queue a session for `rein worker` instead of running it here (PostgreSQL stores only, else `QUEUE_UNSUPPORTED`):
   * it carries the task, this harness's workspace, provider identity (and the scripted provider's script, never a
   * key), permissions, sandbox overrides, budgets and the locations of `cli` plugin specs (`--plugin`). Plugin values
   * and `hooks` given here do not travel: the worker loads the workspace's plugins and command hooks as `rein run`
   * would. Resolves with the session id.
   */
  submit(options: SubmitOptions): Promise<string>;
  /** Rebuild a session from the log, resolve its in-doubt effects and continue it. */
  resumeSession(sessionId: string, options?: ResumeOptions): Promise<{ session: ReinSession; report: ResumeReport }>;
  /** Verify a session by replay; rejects with `DivergenceError` on the first differing seq. */
  replaySession(sessionId: string): Promise<ReplayCounts>;
  /** Fork a session at a step boundary; resolves with the new session id. */
  forkSession(sessionId: string, atSeq: number, options?: ForkOptions): Promise<string>;
  listSessions(): Promise<SessionSummary[]>;
  getSession(sessionId: string): Promise<SessionSummary | undefined>;
  /** The handle of a session this harness is running now (created, started or resumed here and not yet ended). */
  session(sessionId: string): ReinSession | undefined;
  /** Every session this harness is running now. */
  runningSessions(): ReinSession[];
  /** Live telemetry when `telemetry` was given: its counts, and a bounded flush for the end of the process. */
  readonly telemetry?: TelemetryHandle;
  /** Memory governance over this store: list, review, approve, reject, revoke, health (what `rein memory` drives). */
  readonly memory: MemoryGovernance;
  /** The loaded plugins and the hook kernel. */
  readonly plugins: ReinPlugins;
  /** Any stored session's records from `from` on, typed by their `type`: history first, then live appends (RxJS; never completes). */
  records(sessionId: string, from?: number): Observable<ReinRecord>;
  /**
   * Stop the plugins (each one's `stop`, in reverse load order; their contributions revoked) and record it —
   * `plugin.stopped`, or `plugin.failed` at phase `stop` — at the end of the log of every session this harness ran in
   * this process (created, started, or resumed without having ended before), once that session is quiet. Plugins live
   * as long as their harness, not one session: call this when the sessions are quiet and the harness is done (`rein
   * run`, `rein resume` and each session a worker runs do). A log that cannot be appended to (a worker that lost its
   * lease) does not get the record. Later calls do nothing.
   */
  stopPlugins(reason?: string): Promise<void>;
  /**
   * Interrupt every running session (effects aborted, each one resumable), wait until they are quiet, then stop the
   * plugins (`stopPlugins`). The store stays open: the host that opened it closes it.
   */
  close(reason?: string): Promise<void>;
}

/** Options of `Rein.submit`. */
export interface SubmitOptions {
  task: string;
  sessionId?: string;
  budgets?: Partial<Budgets>;
  /** Rerun in-doubt effects that need confirmation when a worker resumes the session. */
  confirmInDoubt?: boolean;
}
/** The capability side of a harness: discovery policy options, skill discovery, MCP servers. */
const capabilityServicesOf = (options: ReinOptions, workspace: string, toolNames: readonly string[]): CapabilityServices => {
  const skills = options.skills;
  const servers = mcpSpecsOf(options.mcpServers);
  const known = new Set([...toolNames, 'tool_search', 'skill']);
  return {
    options: options.capabilities === false ? {} : (options.capabilities ?? {}),
    ...(skills === false ? {} : { discoverSkills: () => discoverSkills({ workspace, options: skills ?? {}, known: (name) => known.has(name) || name.startsWith('mcp__') }) }),
    ...(servers.length > 0 ? { mcp: () => new SessionMcp({ servers, workspace }) } : {}),
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
  const shared = SandboxConfig.safeParse({ mode: given.mode, network: given.network, allowedHosts: given.allowedHosts === undefined ? undefined : [...given.allowedHosts], loginShell: given.loginShell });
  if (!shared.success) throw new ReinError('USAGE', `createRein({ sandbox }): ${shared.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return { ...defaultSandboxPolicy, ...given, ...mergeSandboxConfig(shared.data) };
};

/** Compose a harness from a store, a workspace and a provider. */
export const createRein = async (options: ReinOptions): Promise<Rein> => {
  checkReinOptions(options as Parameters<typeof checkReinOptions>[0], [...(options.tools ?? builtinTools()).map((tool) => tool.name), 'submit_report', 'delegate_task', 'tool_search', 'skill', 'memory_read', 'memory_write', 'read_artifact']);
  await loadBlake3();
  const sandbox = sandboxPolicyOf(options.sandbox);
  // The start-up probe: whether bubblewrap can build a sandbox here is found once, before any session runs.
  await sandboxEnforcement(sandbox);
  const found = await stat(options.workspace).catch(() => undefined);
  if (!found?.isDirectory()) throw new ReinError('USAGE', `createRein({ workspace }): ${options.workspace} ${found ? 'is not a directory' : 'does not exist'}`);
  const unsafe = workspaceInsideConfigHome(options.workspace);
  if (unsafe) throw new ReinError('USAGE', unsafe);
  const workspace = await Workspace.open(options.workspace, options.protectedPaths ? { protectedPaths: options.protectedPaths } : {});
  const clock = options.clock ?? Date.now;
  const memoryOptions = options.memory === false ? undefined : (options.memory ?? {});
  const scope = memoryOptions ? await resolveMemoryScope(workspace.root, memoryOptions.scope) : undefined;
  const governance = new GovernanceLog(options.store, { clock });
  const context = scope && !options.context?.memory ? { ...options.context, memory: { workspace: scope.workspace, repo: scope.repo, ...(scope.branch ? { branch: scope.branch } : {}), ...(scope.user ? { user: scope.user } : {}) } } : options.context;
  const baseTools = options.tools ?? builtinTools();
  const capabilities = new CapabilityRegistry(new Set(baseTools.map((tool) => tool.name)));
  const pluginHost = new PluginHost({ workspace: workspace.root, registry: capabilities, clock, ...(options.pluginPolicy ? { policy: options.pluginPolicy } : {}) });
  for (const entry of options.plugins ?? []) await pluginHost.load('setup' in entry ? { source: 'host', plugin: entry } : entry);
  const hooks = new HookKernel([...capabilities.hookRegistrations(), ...commandHookRegistrations(options.hooks, { workspace: workspace.root })]);
  const services: SessionServices = {
    store: options.store,
    provider: options.provider,
    ...(options.fallbacks && options.fallbacks.length > 0 ? { fallbacks: options.fallbacks } : {}),
    registry: new ToolRegistry([...baseTools, ...capabilities.toolDefinitions()]),
    hooks,
    ...(pluginHost.plugins().length > 0 ? { plugins: pluginHost } : {}),
    workspace,
    budgets: { ...defaultBudgets, ...options.budgets },
    clock,
    systemPrompt: options.systemPrompt ?? defaultSystemPrompt(workspace.root),
    modelOptions: options.modelOptions ?? {},
    retry: options.retry ?? {},
    random: options.random ?? Math.random,
    snapshotEvery: options.snapshotEvery ?? 500,
    parallelTools: options.parallelTools ?? 4,
    ...(options.effectGate ? { effectGate: options.effectGate } : {}),
    ...(options.observationLimit === undefined ? {} : { observationLimit: options.observationLimit }),
    ...(context ? { context } : {}),
    ...(options.contextView ? { contextView: options.contextView } : {}),
    ...(options.classifyVerification ? { classifyVerification: options.classifyVerification } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    permissions: new PermissionPolicy(options.permissions),
    sandbox,
    ...(memoryOptions && scope ? { memory: { governance, scope, autoPromote: memoryOptions.autoPromote ?? true, refreshIntervalMs: memoryOptions.refreshIntervalMs ?? 1_000 } } : {}),
    delegation: delegationConfigOf(options.delegation),
    ...(options.capabilities === false ? {} : { capabilities: capabilityServicesOf(options, workspace.root, [...baseTools.map((tool) => tool.name), ...capabilities.toolDefinitions().map((tool) => tool.name)]) }),
  };
  const registry = new SessionRegistry();
  // The sessions this harness ran here, which record their plugins' stop: a handle until the session ended and is
  // quiet, then only its id (a long-lived harness does not keep ended sessions in memory).
  const hosted = new Map<string, ReinSession | undefined>();
  const remember = (session: ReinSession): ReinSession => {
    if (pluginHost.plugins().length === 0 || pluginsStopped) return session;
    hosted.set(session.id, session);
    const subscription = session.records$.subscribe((record) => {
      if (record.actor !== rootPath || record.type !== 'session.ended') return;
      queueMicrotask(() => subscription.unsubscribe());
      void session
        .whenQuiet()
        .catch(() => undefined)
        .then(() => {
          if (hosted.get(session.id) === session) hosted.set(session.id, undefined);
        });
    });
    return session;
  };
  let pluginsStopped: Promise<void> | undefined;
  const stopPlugins = (reason: string): Promise<void> =>
    (pluginsStopped ??= (async () => {
      const from = pluginHost.journal().length;
      await pluginHost.stopAll(reason);
      const facts = pluginHost.journal().slice(from);
      for (const [sessionId, session] of hosted) {
        await session?.whenQuiet().catch(() => undefined);
        if (facts.length > 0) await appendFacts(options.store, sessionId, facts, clock).catch(() => undefined);
      }
      hosted.clear();
    })());
  const telemetry: LiveTelemetry | undefined = options.telemetry ? (await import('./telemetry/live-telemetry.js')).createLiveTelemetry(options.telemetry) : undefined;
  const watched = (session: ReinSession, silentThrough = 0): ReinSession => {
    telemetry?.watch(session, { store: options.store, silentThrough });
    return session;
  };
  const { name, model, source } = options.provider;
  return {
    store: options.store,
    workspace: workspace.root,
    provider: { name, ...(model === undefined ? {} : { model }), ...(source === undefined ? {} : { source }) },
    createSession: async (sessionOptions) => remember(watched(registry.add(await createSession(services, sessionOptions)))),
    submit: async (submitOptions) => {
      checkSessionOptions(submitOptions, 'submit');
      const { name: providerName, model: providerModel, source } = options.provider;
      const scriptFile = providerName === 'scripted' && source !== undefined ? await readHostFile(resolvePath(workspace.root, source)) : undefined;
      if (scriptFile && !scriptFile.ok) throw new ReinError('SCRIPT_INVALID', `cannot read the script: ${hostFileProblem(source!, scriptFile)}`);
      const script = scriptFile?.ok ? JSON.parse(scriptFile.bytes.toString('utf8')) : undefined;
      return submitSession(options.store, {
        sessionId: submitOptions.sessionId ?? newSessionId(clock()),
        task: submitOptions.task,
        workspace: workspace.root,
        provider: {
          name: providerName,
          ...(providerModel === undefined ? {} : { model: providerModel }),
          ...(source === undefined ? {} : { source: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(source) ? displayEndpoint(source) : source }),
          ...(options.fallbacks && options.fallbacks.length > 0 ? { fallbacks: options.fallbacks.map((link) => ({ name: link.name, ...(link.model ? { model: link.model } : {}), ...(link.source ? { source: displayEndpoint(link.source) } : {}) })) } : {}),
        },
        ...(script === undefined ? {} : { script }),
        permissions: JSON.parse(JSON.stringify(options.permissions ?? {})) as QueuedSession['permissions'],
        sandbox: JSON.parse(JSON.stringify(options.sandbox ?? {})) as QueuedSession['sandbox'],
        budgets: { ...options.budgets, ...submitOptions.budgets },
        // One-run plugins (`--plugin`) travel with the session; the worker reads the workspace's plugins and hooks itself.
        plugins: (options.plugins ?? []).flatMap((entry) => ('source' in entry && entry.source === 'cli' && entry.location ? [resolvePath(entry.location)] : [])),
        confirmInDoubt: submitOptions.confirmInDoubt ?? false,
      });
    },
    startSession: async (sessionOptions) => {
      const session = remember(watched(registry.add(await createSession(services, sessionOptions))));
      await session.send(sessionOptions.task);
      return session;
    },
    resumeSession: async (sessionId, resumeOptions) => {
      const before = telemetry ? await options.store.head(sessionId) : 0;
      const resumed = await resumeSession(services, sessionId, resumeOptions);
      watched(registry.add(resumed.session), before);
      // A session that had ended before recorded nothing of this process's plugins, so nothing of their stop either.
      if (!resumed.report.alreadyEnded) remember(resumed.session);
      return resumed;
    },
    replaySession: async (sessionId) => {
      const { verified, inputs, regenerated, head } = await replaySession(options.store, sessionId);
      return { verified, inputs, regenerated, head };
    },
    forkSession: (sessionId, atSeq, forkOptions) => forkSession(options.store, sessionId, atSeq, { clock, ...forkOptions }),
    listSessions: () => listSessions(options.store),
    getSession: (sessionId) => summarizeSession(options.store, sessionId),
    session: (sessionId) => registry.get(sessionId),
    runningSessions: () => registry.list(),
    ...(telemetry ? { telemetry: { stats: () => telemetry.stats(), flush: (timeoutMs?: number) => telemetry.flush(timeoutMs), shutdown: (timeoutMs?: number) => telemetry.shutdown(timeoutMs) } } : {}),
    memory: createMemoryGovernance({ store: options.store, clock, log: governance }),
    // A session that does not exist is an error, not a tail that waits forever for a first record.
    records: (sessionId, from = 1) =>
      defer(async () => {
        if ((await options.store.head(sessionId)) === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
        return options.store.tail(sessionId, from) as Observable<ReinRecord>;
      }).pipe(mergeAll()),
    plugins: {
      list: () => pluginHost.plugins(),
      tools: () => capabilities.describeTools(),
      providers: () => capabilities.providers(),
      commands: () => capabilities.commands(),
      hooks: () => hooks.list().map(({ id, point, kind, order, timeoutMs, failOpen }) => ({ id, point, kind, order, timeoutMs, failOpen })),
    },
    stopPlugins: (reason = 'the harness is done') => stopPlugins(reason),
    close: async (reason = 'the host is shutting down') => {
      await registry.interruptAll(reason);
      await stopPlugins(reason);
    },
  };
};
