import type { CapabilityCatalog, CapabilityProblem } from '../../models/capability.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { defaultContextWindow } from '../projections/context-budget.js';
import type { PermissionPolicy } from '../policy/permission-policy.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { agentCapabilitiesOf, type AgentCapabilities, type LoadableSkill } from './agent-capabilities.js';
import { buildCatalog, type CapabilityOptions } from './catalog.js';
import { CapabilityDeriver, type ConnectionView } from './capability-deriver.js';
import { skillTool } from '../skills/skill.tool.js';
import { toolSearchTool } from './tool-search.tool.js';

/** The MCP side of a session, as the capabilities need it (src/mcp/session-mcp.ts implements it). */
export interface SessionMcpPort {
  /** Tools that exist only with MCP servers (`list_mcp_resources`, `read_mcp_resource`). */
  readonly tools: readonly AnyToolDefinition[];
  /** Start every server: their `mcp.*` records go through `step`, their tools into `registry`. */
  start(step: (input: { type: string; actor?: string; data: Record<string, unknown> }) => Promise<unknown>, registry: ToolRegistry): void;
  /** Resolves once every server is ready or has failed (bounded by its connect timeout). */
  ready(): Promise<void>;
  /** True when this server is configured for the session. */
  configures(server: string): boolean;
  /** Close every connection (and stdio process tree). Records nothing. */
  close(): Promise<void>;
}

/** What a harness knows about capabilities before a session starts. */
export interface CapabilityServices {
  options: CapabilityOptions;
  /** Discover the skills (project first, then the user's); malformed ones come back as problems. */
  discoverSkills?: () => Promise<{ skills: LoadableSkill[]; problems: CapabilityProblem[] }>;
  /** The session's MCP servers (a fresh set of connections per session). */
  mcp?: () => SessionMcpPort;
}

/** Rein's own tools: the built-ins, and the tools capabilities add. */
export const capabilityToolNames: ReadonlySet<string> = new Set(['tool_search', 'skill', 'list_mcp_resources', 'read_mcp_resource']);

/**
 * One session's capabilities: its registry (the harness's tools, `tool_search`, `skill` when there are skills, and
 * every MCP server's tools as they come and go), the deriver that decides each round's visible set from the log, the
 * skill index, and its MCP connections. Built when the session is created or resumed; closed when it ends.
 */
export class SessionCapabilities {
  readonly deriver: CapabilityDeriver;
  readonly registry: ToolRegistry;
  private readonly agents = new Map<string, AgentCapabilities>();
  private connections: () => readonly ConnectionView[] = () => [];
  private closed = false;

  private constructor(
    private readonly services: CapabilityServices,
    base: ToolRegistry,
    readonly skills: readonly LoadableSkill[],
    readonly problems: readonly CapabilityProblem[],
    private readonly mcp: SessionMcpPort | undefined,
    deriver: CapabilityDeriver,
  ) {
    this.deriver = deriver;
    const own: AnyToolDefinition[] = [toolSearchTool as unknown as AnyToolDefinition];
    if (skills.length > 0) own.push(skillTool(skills));
    if (mcp) own.push(...mcp.tools);
    this.registry = new ToolRegistry(own.filter((tool) => base.get(tool.name) === undefined), { parent: base });
  }

  /** Discover skills and prepare (not start) the MCP connections of a new or resumed session. */
  static async open(services: CapabilityServices, base: ToolRegistry, deriver = new CapabilityDeriver()): Promise<SessionCapabilities> {
    const found = services.discoverSkills ? await services.discoverSkills() : { skills: [], problems: [] };
    return new SessionCapabilities(services, base, found.skills, found.problems, services.mcp?.(), deriver);
  }

  /** The `capability.catalog` for a session with these tools under this policy. */
  catalog(tools: readonly string[], permissions: PermissionPolicy, model: string | undefined, contextWindow?: number): CapabilityCatalog {
    const names = [...new Set([...tools.filter((name) => name !== 'submit_report'), ...this.ownTools()])];
    const defined = names.flatMap((name) => {
      const tool = this.registry.get(name);
      return tool ? [tool] : [];
    });
    return buildCatalog({
      tools: defined,
      schemaOf: (name) => this.registry.schemaOf(name) ?? {},
      builtin: new Set([...builtinNames, ...capabilityToolNames]),
      skills: this.skills.map(({ root: _root, ...entry }) => entry),
      problems: this.problems,
      permissions,
      contextWindow: contextWindow ?? defaultContextWindow(model),
      options: this.services.options,
    });
  }

  /** Search and skill lookup for one agent (shared by its tool calls). */
  agent(actor: string): AgentCapabilities {
    let agent = this.agents.get(actor);
    if (!agent) {
      agent = agentCapabilitiesOf({ actor, deriver: this.deriver, registry: this.registry, skills: this.skills, connections: () => this.connections() });
      this.agents.set(actor, agent);
    }
    return agent;
  }

  /** Start the MCP servers; `connections` reads the session's connection actors (the deriver reads them too). */
  start(step: (input: { type: string; actor?: string; data: Record<string, unknown> }) => Promise<unknown>, connections: () => readonly ConnectionView[]): void {
    this.connections = connections;
    this.mcp?.start(step, this.registry);
  }

  /** True when the session's configuration has this MCP server. */
  configures(server: string): boolean {
    return this.mcp?.configures(server) ?? false;
  }

  /** Resolves once every MCP server is ready or has failed; at once without servers. */
  ready(): Promise<void> {
    return this.mcp?.ready() ?? Promise.resolve();
  }

  /** Close the MCP connections (idempotent; records nothing — the session's end or interruption says why). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.mcp?.close();
  }

  /** Fold a stored record (resume rebuilds the deriver from the whole log). */
  observe(record: RecordEnvelope): void {
    this.deriver.observe(record);
  }

  private ownTools(): string[] {
    return this.registry.names().filter((name) => capabilityToolNames.has(name));
  }
}

/** The names of rein's built-in tools (the rest of a catalog's local tools are the host's). */
const builtinNames: ReadonlySet<string> = new Set(['read', 'write', 'edit', 'edit_lines', 'list_dir', 'glob', 'grep', 'read_artifact', 'bash', 'memory_read', 'memory_write', 'delegate_task', 'submit_report', 'apply_patch', 'update_plan']);
