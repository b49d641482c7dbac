import * as z from 'zod';
import { PermissionMode } from './permission.records.js';
import { lazySchema } from './lazy-schema.js';

/** Where a capability comes from: rein's own tools, tools a host app passed in, an MCP server, or an Agent Skill. */
export const CapabilitySource = lazySchema(() => z.enum(['builtin', 'host', 'mcp', 'skill']));
export type CapabilitySource = z.infer<typeof CapabilitySource>;

/** The tool risks the permission stage groups tools by (mirrors `ToolRisk`). */
export const CapabilityRisk = lazySchema(() => z.enum(['read', 'write', 'execute', 'network', 'delegate']));
export type CapabilityRisk = z.infer<typeof CapabilityRisk>;

/**
 * One entry of the capability catalog: what the discovery policy needs to decide visibility without the tool's code
 * (its name as the model sees it, where it comes from, how risky it is, and what its schema costs in tokens).
 * Descriptions are left out: search reads them from the live registry, never from the log.
 */
export const CapabilityDescriptor = lazySchema(() => z.object({
  name: z.string().min(1).max(64),
  source: CapabilitySource,
  readOnly: z.boolean(),
  destructive: z.boolean(),
  openWorld: z.boolean(),
  risk: CapabilityRisk,
  /** Estimated tokens of its model-facing description and JSON Schema (one token per three characters, rounded up). */
  tokens: z.number().int().nonnegative(),
  schemaDigest: z.string(),
  /** Only visible while some connected MCP server offers resources (`list_mcp_resources`, `read_mcp_resource`). */
  requires: z.literal('mcp-resources').optional(),
  /** For an MCP tool: the server's name in the configuration and the tool's own (full, unsanitised) name. */
  server: z.string().optional(),
  tool: z.string().optional(),
}));
export type CapabilityDescriptor = z.infer<typeof CapabilityDescriptor>;

/** The discovery policy's configuration, recorded so replay recomputes every visible set from the log alone. */
export const DiscoveryPolicy = lazySchema(() => z.object({
  mode: PermissionMode,
  /** At most this many tools are visible in one round (default 64); the rest are deferred behind `tool_search`. */
  visibleLimit: z.number().int().positive(),
  /** The context window the token budget is a share of. */
  contextWindow: z.number().int().positive(),
  /** The share of the window tool schemas may take (default 0.25); halved when the last input used over 3/4 of the window. */
  toolShare: z.number().positive().max(1),
  /** Tool names (or globs such as `mcp__*__delete*`) a tool-wide deny rule hides. */
  hidden: z.array(z.string()),
}));
export type DiscoveryPolicy = z.infer<typeof DiscoveryPolicy>;

/** A skill as the index shows it: name, description and where its SKILL.md lives. */
export const SkillEntry = lazySchema(() => z.object({
  name: z.string().min(1).max(64),
  description: z.string().min(1).max(1024),
  path: z.string().min(1),
  scope: z.enum(['project', 'user', 'host']),
  /** The tools it allows while active (rein names); absent means it does not narrow the tools. */
  allowedTools: z.array(z.string()).optional(),
}));
export type SkillEntry = z.infer<typeof SkillEntry>;

/** A capability source rein could not use, and why (a malformed SKILL.md, an MCP tool whose schema rein cannot use). */
export const CapabilityProblem = lazySchema(() => z.object({ source: z.string(), reason: z.string() }));
export type CapabilityProblem = z.infer<typeof CapabilityProblem>;

/**
 * input · the session's local capabilities and the discovery policy: built-in and host tools, the skills found (and
 * those skipped), the policy's limits. Written in the session's first batch (and again on resume when it changed);
 * with it the session's visible set is computed each round and recorded as `capability.diff`.
 */
export const CapabilityCatalog = lazySchema(() => z.object({
  capabilities: z.array(CapabilityDescriptor),
  skills: z.array(SkillEntry),
  problems: z.array(CapabilityProblem),
  policy: DiscoveryPolicy,
}));
export type CapabilityCatalog = z.infer<typeof CapabilityCatalog>;

/** Why a tool left the visible set (or was never put in it). */
export const RemovalReason = lazySchema(() => z.enum(['deferred', 'server-unavailable', 'not-in-catalog', 'permission', 'skill']));
export type RemovalReason = z.infer<typeof RemovalReason>;

/**
 * effect (derived) · an agent's visible set for its next model call differs from its previous one (the first round
 * starts from the empty set). Computed from the log alone — the catalog, the MCP servers' records, `tool_search`
 * hits, invalid calls, the last input's size — so replay recomputes and compares it. Written in the batch that
 * requests the model call, before its `effect.requested`.
 */
export const CapabilityDiff = lazySchema(() => z.object({
  effectId: z.string().min(1),
  turn: z.number().int().positive(),
  added: z.array(z.object({ name: z.string(), reason: z.string(), schemaDigest: z.string() })),
  removed: z.array(z.object({ name: z.string(), reason: RemovalReason })),
  /** Still visible, but its schema changed (an MCP server changed the tool). */
  changed: z.array(z.object({ name: z.string(), before: z.string(), after: z.string() })),
  visible: z.number().int().nonnegative(),
  deferred: z.number().int().nonnegative(),
  /** Digest of the whole visible set (names and schema digests, by name), so a rebuilt set can be checked. */
  digest: z.string(),
  inputs: z.object({
    mode: PermissionMode,
    visibleLimit: z.number().int().positive(),
    toolBudget: z.number().int().nonnegative(),
    lastInputTokens: z.number().int().nonnegative(),
    catalog: z.number().int().nonnegative(),
    servers: z.record(z.string(), z.string()),
    searchHits: z.array(z.string()),
    lowered: z.array(z.string()),
    skill: z.string().optional(),
  }),
}));
export type CapabilityDiff = z.infer<typeof CapabilityDiff>;

/** effect (fact) · the model loaded a skill's body (or one of its files) with the `skill` tool: what it got, by digest. */
export const CapabilityLoaded = lazySchema(() => z.object({
  /** The `skill` call's effect (recorded since the tool notes mechanism carries it; older logs lack it). */
  effectId: z.string().optional(),
  callId: z.string().min(1),
  kind: z.literal('skill'),
  name: z.string().min(1),
  scope: z.enum(['project', 'user', 'host']),
  path: z.string().min(1),
  /** `b3:` BLAKE3 of exactly the text the model received. */
  digest: z.string(),
  chars: z.number().int().nonnegative(),
  file: z.string().optional(),
  allowedTools: z.array(z.string()).optional(),
}));
export type CapabilityLoaded = z.infer<typeof CapabilityLoaded>;
