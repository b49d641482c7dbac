import * as z from 'zod';
import { GuardrailStage, HookPoint } from '../../models/hook.records.js';
import type { ModelProvider } from '../providers/provider.js';
import type { GuardrailInput, GuardrailResult, HookInput, HookResult, HookRunContext } from '../hooks/hook-types.js';
import { isRange, isVersion } from './semver.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** A plugin id: lower-case letters, digits and single hyphens, at most 32 characters (it prefixes tool names). */
export const pluginIdPattern = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,31}$/;

/** Names the vendors accept for tools: a full tool name `<plugin>__<name>` must match this. */
export const vendorToolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a plugin may ask to do; policy may refuse some (the plugin is then `disabled`). */
export const PluginPermission = lazySchema(() => z.enum(['read', 'write', 'execute', 'network', 'model']));
export type PluginPermission = z.infer<typeof PluginPermission>;

const contributionName = lazySchema(() => z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$/, 'letters, digits, _ and -'));

/**
 * The static declaration a plugin makes before any of its code runs (the plugin host document's `PluginManifest`).
 * Unknown fields are refused; `version` is a semantic version and `requires.hostVersion` a semver range.
 */
export const PluginManifest = lazySchema(() => z
  .object({
    id: z.string().regex(pluginIdPattern, 'lower-case letters, digits and single hyphens, at most 32 characters'),
    name: z.string().min(1).max(100),
    version: z.string().refine(isVersion, 'a semantic version such as 1.2.3'),
    description: z.string().max(2_000).optional(),
    contributes: z
      .object({
        tools: z.array(contributionName).optional(),
        providers: z.array(contributionName).optional(),
        hooks: z.array(HookPoint).optional(),
        guardrails: z.array(GuardrailStage).optional(),
        commands: z.array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/)).optional(),
      })
      .strict()
      .optional(),
    requires: z
      .object({
        hostVersion: z.string().refine(isRange, 'a semver range such as ^0.1.0').optional(),
        capabilities: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .optional(),
    permissions: z.array(PluginPermission).optional(),
    defaultEnabled: z.boolean().optional(),
  })
  .strict());
export type PluginManifest = z.infer<typeof PluginManifest>;

/** What a plugin tool's handler gets: its own config, the workspace root, the call and an abort signal — nothing else. */
export interface PluginToolContext {
  sessionId: string;
  callId: string;
  workspace: string;
  signal: AbortSignal;
  progress(message: string): void;
}

/** A plugin tool's result: text for the model, or a model-visible failure. */
export type PluginToolResult = string | { ok: true; output: string } | { ok: false; code: 'InvalidInput' | 'NotFound' | 'Denied' | 'Timeout'; message: string };

/**
 * A tool a plugin contributes. Its model-facing name is `<plugin>__<name>`; its parameters are a zod schema or a
 * JSON Schema object; `risk` must be one of the plugin's declared permissions. Calls go through the whole tool
 * pipeline (validation, hooks, guardrails, permission, observation) like any built-in.
 */
export interface PluginTool {
  name: string;
  description: string;
  parameters: z.ZodType | Record<string, unknown>;
  risk: 'read' | 'write' | 'execute' | 'network';
  /** Read-only tools run without asking in the default mode and may run in parallel (default: risk `read`). */
  readOnly?: boolean;
  timeoutMs?: number;
  execute(input: Record<string, unknown>, context: PluginToolContext): Promise<PluginToolResult>;
}

/** A provider a plugin contributes, selectable as `--provider <plugin>__<id>`. */
export interface PluginProvider {
  id: string;
  displayName?: string;
  create(settings: { model?: string; baseUrl?: string; apiKey?: string }): ModelProvider;
}

/** A hook a plugin contributes at one point (docs/capabilities.md: *Hooks*). */
export interface PluginHook<P extends HookPoint = HookPoint> {
  id: string;
  point: P;
  /** Lower runs first (default 0); ties keep registration order. */
  order?: number;
  /** Default 1,000 ms. */
  timeoutMs?: number;
  /** At a blocking point, a failure lets the call through instead of denying it (recorded). */
  failOpen?: boolean;
  /** For tool points: a regular expression over the tool name (default: every tool). */
  matcher?: string;
  run(input: HookInput<P>, context: HookRunContext): HookResult | void | Promise<HookResult | void>;
}

/** A hook at any point, discriminated by `point` (so `run` sees that point's input). */
export type AnyPluginHook = { [P in HookPoint]: PluginHook<P> }[HookPoint];

/** A guardrail a plugin contributes at one stage. */
export interface PluginGuardrail<S extends GuardrailStage = GuardrailStage> {
  id: string;
  stage: S;
  order?: number;
  timeoutMs?: number;
  failOpen?: boolean;
  matcher?: string;
  check(input: GuardrailInput<S>, context: HookRunContext): GuardrailResult | Promise<GuardrailResult>;
}

/** A guardrail at any stage, discriminated by `stage`. */
export type AnyPluginGuardrail = { [S in GuardrailStage]: PluginGuardrail<S> }[GuardrailStage];

/** A command a plugin contributes: `rein <plugin> <name> [args…]`. */
export interface PluginCommand {
  name: string;
  description: string;
  run(args: string[], context: { workspace: string; config: unknown; write(text: string): void }): Promise<number | void> | number | void;
}

/** What `setup` returns: the contributions, and an optional `stop` to release what setup acquired. */
export interface PluginContributions {
  tools?: PluginTool[];
  providers?: PluginProvider[];
  hooks?: AnyPluginHook[];
  guardrails?: AnyPluginGuardrail[];
  commands?: PluginCommand[];
  stop?(): void | Promise<void>;
}

/** A plugin's logger: lines go to the host's log (the CLI's stderr with `--verbose`), never to the model. */
export interface PluginLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * The restricted context `setup` gets: a logger, the plugin's own config, workspace info and identity helpers for
 * typing contributions. It holds no runtime, store, session state or way to run a tool (checked by a test).
 */
export interface PluginSetupContext {
  readonly pluginId: string;
  readonly logger: PluginLogger;
  /** This plugin's own config (`pluginConfig.<id>` in `rein.config.json`, or the host's), parsed by `config` if given. */
  readonly config: unknown;
  readonly workspace: { readonly root: string };
  readonly host: { readonly version: string };
  readonly define: {
    tool(tool: PluginTool): PluginTool;
    hook<P extends HookPoint>(hook: PluginHook<P>): PluginHook<P>;
    guardrail<S extends GuardrailStage>(guardrail: PluginGuardrail<S>): PluginGuardrail<S>;
    provider(provider: PluginProvider): PluginProvider;
    command(command: PluginCommand): PluginCommand;
  };
}

/** A plugin: its manifest, an optional schema for its config, and `setup`, which returns its contributions. */
export interface ReinPlugin {
  readonly manifest: PluginManifest;
  readonly config?: z.ZodType;
  setup(context: PluginSetupContext): PluginContributions | Promise<PluginContributions>;
}

/**
 * Define a plugin (an identity helper that type-checks the contract). The host validates the manifest before it
 * calls anything of the plugin; `setup` must only build contributions — no shell commands, no reading secrets, no
 * writing state: side effects belong to tools, which run through the tool pipeline.
 */
export const definePlugin = (plugin: ReinPlugin): ReinPlugin => plugin;
