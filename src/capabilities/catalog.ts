import type { CapabilityCatalog, CapabilityDescriptor, CapabilityProblem, CapabilitySource, DiscoveryPolicy, SkillEntry } from '../../models/capability.records.js';
import { digestOf } from '../../machines/typestate/digest.js';
import type { PermissionPolicy } from '../policy/permission-policy.js';
import type { AnyToolDefinition } from '../tools/tool.js';

/** The discovery policy's defaults: 64 tools at most per round, and a quarter of the window for their schemas. */
export const defaultVisibleLimit = 64;
export const defaultToolShare = 0.25;

/** The capability options a harness takes (`createRein({ capabilities })`). */
export interface CapabilityOptions {
  /** At most this many tools are visible per round (default 64); the rest wait behind `tool_search`. */
  visibleLimit?: number;
  /** The share of the context window tool schemas may take (default 0.25). */
  toolShare?: number;
  /** Problems found before the session started, recorded in its catalog (the CLI's untrusted project files). */
  problems?: readonly CapabilityProblem[];
}

/** Estimated tokens of a text: one per three characters, rounded up (the context policy's documented estimate). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 3);

const schemaDigests = new WeakMap<Record<string, unknown>, Map<string, string>>();

/**
 * The digest of what the model is shown of a tool: its description and its input schema. Computed once per schema
 * object and description (a registry's schemas are shared by every session of a process and never changed).
 */
export const schemaDigestOf = (description: string, schema: Record<string, unknown>): string => {
  let byDescription = schemaDigests.get(schema);
  if (!byDescription) {
    byDescription = new Map();
    schemaDigests.set(schema, byDescription);
  }
  let digest = byDescription.get(description);
  if (digest === undefined) {
    digest = digestOf({ description, schema });
    byDescription.set(description, digest);
  }
  return digest;
};

/** A catalog entry for a tool: its risk facts, the tokens its description and schema cost, and their digest. */
export const descriptorOf = (tool: AnyToolDefinition, schema: Record<string, unknown>, source: CapabilitySource, mcp?: { server: string; tool: string }): CapabilityDescriptor => ({
  name: tool.name,
  source,
  readOnly: tool.annotations.readOnly,
  destructive: tool.annotations.destructive,
  openWorld: tool.annotations.openWorld,
  risk: tool.risk,
  tokens: estimateTokens(tool.name + tool.description + JSON.stringify(schema)),
  schemaDigest: schemaDigestOf(tool.description, schema),
  ...(tool.name === 'list_mcp_resources' || tool.name === 'read_mcp_resource' ? { requires: 'mcp-resources' as const } : {}),
  ...(mcp ? mcp : {}),
});

/** The tool names (or globs) a tool-wide deny rule hides: the visible set leaves them out. */
export const hiddenByRules = (permissions: PermissionPolicy): string[] => permissions.rules.filter((rule) => rule.action === 'deny' && rule.pattern === undefined).map((rule) => rule.tool);

/** Everything a session's `capability.catalog` record is built from. */
export interface CatalogInput {
  tools: readonly AnyToolDefinition[];
  schemaOf(name: string): Record<string, unknown>;
  /** Names of rein's own tools (the rest are the host's). */
  builtin: ReadonlySet<string>;
  skills: readonly SkillEntry[];
  problems: readonly CapabilityProblem[];
  permissions: PermissionPolicy;
  contextWindow: number;
  options?: CapabilityOptions;
}

/** Build the session's `capability.catalog`: its local tools in order, its skills, and the discovery policy. */
export const buildCatalog = (input: CatalogInput): CapabilityCatalog => {
  const policy: DiscoveryPolicy = {
    mode: input.permissions.mode,
    visibleLimit: input.options?.visibleLimit ?? defaultVisibleLimit,
    contextWindow: input.contextWindow,
    toolShare: input.options?.toolShare ?? defaultToolShare,
    hidden: hiddenByRules(input.permissions),
  };
  return {
    capabilities: input.tools.map((tool) => descriptorOf(tool, input.schemaOf(tool.name), input.builtin.has(tool.name) ? 'builtin' : 'host')),
    skills: [...input.skills],
    problems: [...(input.options?.problems ?? []), ...input.problems],
    policy,
  };
};
