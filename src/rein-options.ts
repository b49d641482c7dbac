import type { CaptureConfig } from './changes/capture-config.js';
import type { EnvironmentOptions } from './session/environment-block.js';
import type { Budgets } from '../models/budgets.js';
import type { Prices } from '../models/price-table.js';
import type { ModelOptions } from '../models/model-contract.js';
import type { EventStore } from '../stores/event-store.js';
import type { RetryPolicy } from './effects/model-retry.js';
import type { ModelProvider } from './providers/provider.js';
import type { ContextPolicyOptions } from './projections/context-policy.js';
import type { ContextViewOptions } from './projections/context.view.js';
import type { VerificationClassifier } from './effects/verification.js';
import type { PermissionsConfig } from './policy/permission-policy.js';
import type { SandboxPolicy } from './policy/sandbox-policy.js';
import type { AnyToolDefinition } from './tools/tool.js';
import type { MemoryScopeKeys } from './memory/memory-scope.js';
import type { delegationConfigOf } from './delegation/roles.js';
import type { TelemetryOptions } from './telemetry/live-telemetry.js';
import type { CapabilityOptions } from './capabilities/catalog.js';
import type { SkillOptions } from './skills/skill-discovery.js';
import type { McpServerConfig } from './mcp/mcp-config.js';
import type { PluginSpec } from './plugins/plugin-host.js';
import type { PluginPermission, ReinPlugin } from './plugins/plugin-contract.js';
import type { CommandHooksConfig } from './hooks/command-hooks.js';
import type { InstructionOptions } from './session/project-instructions.js';

/** Governed long-term memory (docs/memory.md: *Memory governance*). */
export interface MemoryOptions {
  /** Promote approved candidates when a session ends (default true); off, every candidate waits for a person. */
  autoPromote?: boolean;
  /** Override the boundaries memory is scoped to (default: the workspace, its git repository and branch). */
  scope?: Partial<MemoryScopeKeys>;
  /** Re-read the governance stream before a model call at most this often, in ms (default 1,000). */
  refreshIntervalMs?: number;
}

/** What `createRein` composes a harness from. */
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
  /**
   * Whether the default tools include `apply_patch` (OpenAI's patch format). Default: true for the scripted and
   * recorded providers, false for other models (the CLI sets it from `applyPatch` in `rein.config.json`). Ignored when
   * `tools` is given.
   */
  applyPatch?: boolean;
  /**
   * Session budgets: `maxTurns`, `maxToolCalls`, `maxTokens`, `maxWallTimeMs` (the machine's guards) and `maxCostUsd`
   * (the whole tree's spend in US dollars, checked before each model call: docs/model-input.md, "The cost budget").
   */
  budgets?: Partial<Budgets>;
  /**
   * Model prices in US dollars per million tokens, by model name or prefix, merged over the shipped `defaultPrices`:
   * what `sessionCost` and the cost budget charge. A model with none costs "unknown" (a cost budget refuses it).
   */
  prices?: Prices;
  systemPrompt?: string;
  modelOptions?: ModelOptions;
  /** Epoch-milliseconds clock used for record times and elapsed time (default `Date.now`). */
  clock?: () => number;
  /** Retry budget for model calls: attempts, backoff and total time (see `defaultRetryPolicy`). */
  retry?: Partial<RetryPolicy>;
  /**
   * Record ids (default: a random per-process prefix plus a counter). Inject a deterministic generator
   * (`sequentialIds(seed)` from `rein/testing`) with a fixed `clock` and a `sessionId` for logs that are the same
   * on every run (golden logs). One generator serves every session and the memory stream of the harness.
   */
  newRecordId?: () => string;
  /** Randomness for backoff jitter (default `Math.random`); inject a seeded one for reproducible timing. */
  random?: () => number;
  /** Save a machine snapshot every this many records (default 500; 0 disables). */
  snapshotEvery?: number;
  /** Read-only tool calls of one turn that may run at once (default 4); writes always run alone. */
  parallelTools?: number;
  /**
   * Most tool calls of one model reply that run (default 32, `defaultMaxParallelToolCalls`). The calls past it are
   * refused before any call of the reply runs, each as a `Denied` result the model sees (nothing of them runs, they
   * spend no tool-call budget), and the session goes on. The CLI reads `maxParallelToolCalls` in `rein.config.json`.
   */
  maxParallelToolCalls?: number;
  /**
   * How long a tool or a model call may go on after it was cancelled (`session.interrupt()`, `cancel()`,
   * `rein.close()`, the wall-time budget) before it is abandoned: default 5,000 ms (`defaultAbandonGraceMs`). A tool
   * that ignores its `AbortSignal` then settles `Cancelled` (as a `timeoutMs` settles `Timeout`), a model call fails
   * `cancelled`, and what it still does is not awaited, so `whenQuiet()`, interrupt, close and budgets always finish.
   */
  abandonGraceMs?: number;
  /** Observations longer than this many characters are truncated into an artifact. */
  observationLimit?: number;
  /** Paths no tool may touch (default: `<workspace>/.rein`); pass the store directory when it lives elsewhere inside. */
  protectedPaths?: readonly string[];
  /** The context policy: window, reserved output, tail length, phase shares, memory scope (docs/model-input.md: *The context policy*). */
  context?: ContextPolicyOptions;
  /**
   * Project instructions (docs/model-input.md: *Project instructions*): `AGENTS.md` (else `CLAUDE.md`) at the workspace root and on
   * the way to the files the agent works in, and the user's `<config home>/AGENTS.md`, within `maxTokens` (default
   * 8,000); `user: false` skips the user's file; `false` loads none.
   */
  instructions?: InstructionOptions | false;
  /**
   * The environment block (docs/model-input.md: *The system prompt and the environment*): workspace, OS and shell, date, sandbox and
   * network, git branch/state/recent commits and a capped top-level listing, captured once per session and recorded as
   * `environment.captured`; `false` leaves it out.
   */
  environment?: EnvironmentOptions | false;
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
   * ends; OpenTelemetry is loaded only when this is set. See docs/telemetry.md.
   */
  telemetry?: TelemetryOptions;
  /**
   * The discovery policy (`visibleLimit`, default 64; `toolShare`, default 0.25), or `false` for none: sessions then
   * keep a fixed tool list, record no catalog and have no skills, MCP servers or `tool_search` (docs/capabilities.md: *Capabilities*).
   */
  capabilities?: CapabilityOptions | false;
  /** Agent Skills: extra folders, whether to read `~/.agents/skills` (default on); `false` for none. */
  skills?: SkillOptions | false;
  /**
   * MCP servers, by name, in the shape `.mcp.json` uses (`{ command, args?, env?, cwd? }` or `{ type: "http", url,
   * headers? }`), or an in-process server (`{ type: "in-memory", connect(transport) }`). Each session connects to
   * them when it starts and closes them when it ends (docs/capabilities.md: *MCP servers*).
   */
  mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /**
   * Plugins to load (docs/capabilities.md: *Plugins*): a plugin value (`definePlugin(...)`, source `host`) or a spec with its source,
   * config, enablement and trust (what the CLI's loader builds from `.rein-plugins/`, `rein.config.json` and `--plugin`).
   */
  plugins?: ReadonlyArray<ReinPlugin | PluginSpec>;
  /** Command hooks in Claude Code's settings shape (the `hooks` field of `rein.config.json`; docs/capabilities.md: *Command hooks*). */
  hooks?: CommandHooksConfig;
  /** Plugin policy: permissions no plugin may have; whether `test` plugins may load (only the test runtime sets it). */
  pluginPolicy?: { deniedPermissions?: readonly PluginPermission[]; allowTestSource?: boolean };
  /**
   * The workspace capture (docs/replay.md: *Time travel*): every change a session's steps make to the workspace is recorded,
   * so `diff`, `rewind` and `compare` are exact. On by default; `false` turns it off; the object says what to leave out
   * and the size cap (`{ gitignore?, exclude?, include?, maxFileMb? }`).
   */
  capture?: CaptureConfig | false;
}
