import type { CapabilityCatalog, CapabilityDescriptor, CapabilityDiff, RemovalReason } from '../../models/capability.records.js';
import type { PermissionMode } from '../../models/permission.records.js';
import { offeredTools, type McpConnectionContext } from '../../machines/mcp-connection.machine.js';
import { createHash } from 'node:crypto';
import type { StepDerived } from '../../models/step.records.js';
import { draftOfEntry } from '../host/step-record.js';
import { exclusionOf, reportToolName, SelectionPool, skillToolName, toolSearchName, toolBudgetOf, type Candidate } from './visible-set.js';

/** A record as the deriver folds it (an input, a machine's draft, or a stored record when rebuilding). */
export interface FoldedRecord {
  type: string;
  actor: string;
  data: unknown;
  corr?: string;
}

/** One MCP connection actor as the tree holds it. */
export interface ConnectionView {
  value: unknown;
  context: McpConnectionContext;
}

/** An agent's visible set as last recorded: names in order, each with its schema digest. */
export interface VisibleSet {
  names: readonly string[];
  digests: ReadonlyMap<string, string>;
  digest: string;
  deferred: number;
}

interface AgentState {
  visible: VisibleSet | undefined;
  hits: string[];
  streaks: Map<string, number>;
  skill: { name: string; allowedTools?: string[] } | undefined;
  lastInputTokens: number;
  /** A child's task: its tools (plus `submit_report`) and permission mode; undefined for the root agent. */
  rights: { tools: ReadonlySet<string>; mode: PermissionMode } | undefined;
  /** Something this agent's set depends on changed since it was last decided. */
  dirty: boolean;
  /** The agent's selection pool and the catalog version it was built for (rebuilt when either side changes). */
  pool: { version: number; pool: SelectionPool } | undefined;
  /** The servers' states and the active skill when its set was last decided (for the reasons of a diff). */
  decidedWith: { servers: Record<string, string>; skill: string | undefined } | undefined;
}

const rootPath = 'root';

/** The stand-in catalog entry of a child's `submit_report` (its schema is the child's contract). */
const reportDescriptor: CapabilityDescriptor = { name: reportToolName, source: 'builtin', readOnly: true, destructive: false, openWorld: false, risk: 'read', tokens: 0, schemaDigest: 'contract' };

/** The digest of a visible set: SHA-256 of its names and schema digests in name order (the order shown does not count). */
const setDigest = (entries: ReadonlyArray<{ name: string; schemaDigest: string }>): string => {
  const hash = createHash('sha256');
  for (const entry of [...entries].sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))) hash.update(`${entry.name}\u0000${entry.schemaDigest}\n`);
  return `sha256:${hash.digest('hex')}`;
};

const emptySet: VisibleSet = { names: [], digests: new Map(), digest: setDigest([]), deferred: 0 };

const stringsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/**
 * Derives each agent's visible set from the log (docs/capabilities.md: *The visible set*). It folds the capability catalog, the
 * agents' `tool_search` hits, invalid calls, active skills and input sizes, and reads the MCP servers' state from the
 * session's connection actors; in the step that requests an agent's model call it decides that round's set and, when
 * it differs from the agent's last one (or on the first round), inserts a `capability.diff` before the request. Pure
 * and deterministic: the live host and replay run the same deriver over the same records, so replay regenerates
 * every diff. Sessions without a `capability.catalog` (written before capabilities existed) derive nothing.
 */
export class CapabilityDeriver {
  private catalog: CapabilityCatalog | undefined;
  private local: Candidate[] = [];
  private remote: { candidates: Candidate[]; known: Set<string>; servers: Record<string, string>; resources: boolean } = { candidates: [], known: new Set(), servers: {}, resources: false };
  private remoteDirty = true;
  private readonly agents = new Map<string, AgentState>();
  /** Paths with agents below them (a child that delegated): only their end has more than their own state to forget. */
  private readonly ancestors = new Set<string>();
  /** The catalog's candidates in order (local, then MCP), and with a child's `submit_report`; rebuilt when either side changes. */
  private all: { root: Candidate[]; child: Candidate[] } | undefined;
  /** Bumped whenever the catalog or the servers change: every agent's pool is rebuilt on its next decision. */
  private version = 0;

  /** True once the session has a capability catalog: from then on each round's set is derived and recorded. */
  get active(): boolean {
    return this.catalog !== undefined;
  }

  /** The catalog's policy and skills, as last recorded. */
  get recordedCatalog(): CapabilityCatalog | undefined {
    return this.catalog;
  }

  /** The agent's visible set as last recorded, or undefined (no catalog, or no round yet). */
  visible(actor: string): VisibleSet | undefined {
    return this.agents.get(actor)?.visible;
  }

  /** The tools `tool_search` found for an agent, most wanted first: the newest search's hits in its ranking, then older ones. */
  hitsOf(actor: string): readonly string[] {
    return this.agents.get(actor)?.hits ?? [];
  }

  /** The skill that narrows an agent's tools right now, if any. */
  activeSkill(actor: string): { name: string; allowedTools?: string[] } | undefined {
    return this.agents.get(actor)?.skill;
  }

  /** Fold one record. Stored `capability.diff` records (when rebuilding from a log) set the agent's visible set. */
  observe(record: FoldedRecord): void {
    const type = record.type;
    if (type === 'step.derived') {
      // A stored step record (when rebuilding from a log): what it derived, in order.
      const derived = (record.data as StepDerived).derived;
      for (const entry of derived) this.observe(draftOfEntry(entry, derived));
      return;
    }
    const data = (record.data ?? {}) as Record<string, unknown>;
    if (type === 'capability.catalog') {
      this.catalog = data as CapabilityCatalog;
      this.local = this.catalog.capabilities.map((descriptor, index) => ({ descriptor, index, offered: true }));
      this.remoteDirty = true;
      this.all = undefined;
      this.version++;
      for (const agent of this.agents.values()) agent.dirty = true;
      return;
    }
    if (type.startsWith('mcp.') || (type === 'actor.transitioned' && record.actor.includes('/mcp/'))) {
      this.remoteDirty = true;
      return;
    }
    if (type === 'tool.settled') return this.observeResult(this.agent(record.actor), data);
    if (type === 'model.responded') {
      const agent = this.agent(record.actor);
      const tokens = Number((data.usage as { inputTokens?: unknown } | undefined)?.inputTokens ?? 0);
      if (this.catalog && toolBudgetOf(this.catalog.policy, tokens) !== toolBudgetOf(this.catalog.policy, agent.lastInputTokens)) agent.dirty = true;
      agent.lastInputTokens = Number.isFinite(tokens) ? tokens : 0;
      return;
    }
    if (type === 'delegation.started') {
      const task = data.task as { tools?: unknown; permissionMode?: PermissionMode } | undefined;
      // The child's first diff may come before this record in the log (both are drafts of one step): keep its state.
      const agent = this.agent(String(data.child));
      agent.rights = { tools: new Set([...stringsOf(task?.tools), reportToolName]), mode: task?.permissionMode ?? 'default' };
      agent.pool = undefined;
      agent.dirty = true;
      return;
    }
    if (type === 'delegation.completed' || type === 'delegation.failed') {
      const child = String(data.child);
      this.agents.delete(child);
      // A scan of every agent per ended child made a delegation's ends quadratic in its fan-out.
      if (this.ancestors.delete(child)) for (const path of this.agents.keys()) if (path.startsWith(`${child}/`)) this.agents.delete(path);
      return;
    }
    if (type === 'capability.diff') this.applyDiff(this.agent(record.actor), data as CapabilityDiff);
  }

  /**
   * The step's drafts with its `capability.diff` drafts inserted: the input and every machine draft are folded first,
   * then each model call the step requests gets its agent's set for that round.
   */
  derive<Draft extends FoldedRecord>(input: FoldedRecord, drafts: readonly Draft[], connections: () => readonly ConnectionView[]): Array<Draft | FoldedRecord> {
    this.observe(input);
    let calls = 0;
    for (const draft of drafts) {
      if (isModelCall(draft)) calls++;
      else this.observe(draft);
    }
    if (!this.catalog || calls === 0) return [...drafts];
    const out: Array<Draft | FoldedRecord> = [];
    for (const draft of drafts) {
      if (isModelCall(draft)) {
        const data = draft.data as { effectId?: unknown; args?: { turn?: unknown } };
        const diff = this.decide(draft.actor, String(data.effectId), Number(data.args?.turn ?? 1), connections);
        if (diff) out.push({ type: 'capability.diff', actor: draft.actor, data: diff });
      }
      out.push(draft);
    }
    return out;
  }

  /**
   * Decide an agent's set for the round now and make it the agent's visible set; returns the diff to record, or
   * undefined when nothing changed (`derive` is how sessions use it; benchmarks and tests call it directly).
   */
  decide(actor: string, effectId: string, turn: number, connections: () => readonly ConnectionView[]): CapabilityDiff | undefined {
    const catalog = this.catalog;
    if (!catalog) return undefined;
    const agent = this.agent(actor);
    if (this.remoteDirty) this.refreshRemote(connections());
    if (agent.visible && !agent.dirty) return undefined;
    agent.dirty = false;
    const selection = this.select(agent, catalog);
    const before = agent.visible ?? emptySet;
    const first = agent.visible === undefined;
    const names = selection.visible.map((entry) => entry.name);
    const digests = new Map(selection.visible.map((entry) => [entry.name, entry.schemaDigest]));
    const added = names.filter((name) => !before.digests.has(name)).map((name) => ({ name, reason: this.addedReason(name, agent, first), schemaDigest: digests.get(name)! }));
    const removed = before.names.filter((name) => !digests.has(name)).map((name) => ({ name, reason: exclusionOf(selection, selection.pool, name) ?? this.missingReason(name) }));
    const changed = names.filter((name) => before.digests.has(name) && before.digests.get(name) !== digests.get(name)).map((name) => ({ name, before: before.digests.get(name)!, after: digests.get(name)! }));
    const digest = first || added.length > 0 || removed.length > 0 || changed.length > 0 ? setDigest(selection.visible) : before.digest;
    agent.visible = { names, digests, digest, deferred: selection.deferred };
    agent.decidedWith = { servers: { ...this.remote.servers }, skill: agent.skill?.allowedTools ? agent.skill.name : undefined };
    if (digest === before.digest && !first) return undefined;
    return {
      effectId,
      turn,
      added,
      removed,
      changed,
      visible: names.length,
      deferred: selection.deferred,
      digest,
      inputs: {
        mode: agent.rights?.mode ?? catalog.policy.mode,
        visibleLimit: catalog.policy.visibleLimit,
        toolBudget: selection.toolBudget,
        lastInputTokens: agent.lastInputTokens,
        catalog: selection.candidates,
        servers: { ...this.remote.servers },
        searchHits: [...agent.hits],
        lowered: selection.lowered,
        ...(agent.skill?.allowedTools ? { skill: agent.skill.name } : {}),
      },
    };
  }

  /**
   * What an agent could be shown this round — visible or deferred, never what the mode, a deny rule, its rights, an
   * active skill or a down server keeps from it — for `tool_search`. Changes nothing.
   */
  reachable(actor: string, connections: () => readonly ConnectionView[]): { visible: ReadonlySet<string>; deferred: ReadonlySet<string> } {
    const catalog = this.catalog;
    if (!catalog) return { visible: new Set(), deferred: new Set() };
    if (this.remoteDirty) this.refreshRemote(connections());
    const agent = this.agent(actor);
    const selection = this.select(agent, catalog);
    const visible = new Set(selection.visible.map((entry) => entry.name));
    const deferred = new Set(selection.pool.filter((candidate) => !visible.has(candidate.descriptor.name) && !selection.excluded.has(candidate.descriptor.name)).map((candidate) => candidate.descriptor.name));
    return { visible, deferred };
  }

  private select(agent: AgentState, catalog: CapabilityCatalog) {
    this.all ??= { root: [...this.local, ...this.remote.candidates], child: [...this.local, ...this.remote.candidates, { descriptor: reportDescriptor, index: Number.MAX_SAFE_INTEGER, offered: true }] };
    const candidates = agent.rights ? this.all.child : this.all.root;
    if (agent.pool?.version !== this.version) {
      const skillAllowed = agent.skill?.allowedTools;
      const pool = new SelectionPool({
        candidates,
        policy: catalog.policy,
        mode: agent.rights?.mode ?? catalog.policy.mode,
        ...(agent.rights ? { rights: agent.rights.tools } : {}),
        ...(skillAllowed ? { skillAllowed } : {}),
        resourcesOffered: this.remote.resources,
      });
      agent.pool = { version: this.version, pool };
    }
    const selection = agent.pool.pool.select({ hits: agent.hits, streaks: agent.streaks, lastInputTokens: agent.lastInputTokens });
    return { ...selection, candidates: candidates.length, pool: candidates };
  }

  private observeResult(agent: AgentState, data: Record<string, unknown>): void {
    const name = String(data.name);
    const value = data.value as Record<string, unknown> | undefined;
    if (data.failedStage === 'schema') {
      agent.streaks.set(name, (agent.streaks.get(name) ?? 0) + 1);
      agent.dirty = true;
    } else if (agent.streaks.delete(name)) agent.dirty = true;
    if (data.status !== 'ok' || !value) return;
    if (name === toolSearchName) {
      const found = stringsOf(value.hits);
      if (found.length === 0) return;
      // The newest search ranks first, its best hit first; only as many hits as the visible limit can ever be shown, so
      // no more are kept (an older search's, then a search's lowest hits are the ones dropped).
      agent.hits = [...found, ...agent.hits.filter((hit) => !found.includes(hit))].slice(0, this.catalog?.policy.visibleLimit ?? found.length);
      agent.dirty = true;
    } else if (name === skillToolName && typeof value.skill === 'string') {
      const allowed = value.allowedTools === undefined ? undefined : stringsOf(value.allowedTools);
      agent.skill = { name: value.skill, ...(allowed ? { allowedTools: allowed } : {}) };
      agent.pool = undefined;
      agent.dirty = true;
    }
  }

  /** Rebuilding from a log: a stored diff sets the agent's set (kept names in order, added ones after them). */
  private applyDiff(agent: AgentState, diff: CapabilityDiff): void {
    const digests = new Map(agent.visible?.digests ?? []);
    for (const entry of diff.removed) digests.delete(entry.name);
    for (const entry of diff.changed) digests.set(entry.name, entry.after);
    for (const entry of diff.added) digests.set(entry.name, entry.schemaDigest);
    agent.visible = { names: [...digests.keys()], digests, digest: diff.digest, deferred: diff.deferred };
    agent.dirty = true;
  }

  private refreshRemote(connections: readonly ConnectionView[]): void {
    const candidates: Candidate[] = [];
    const known = new Set<string>();
    const servers: Record<string, string> = {};
    let resources = false;
    let index = this.local.length;
    for (const connection of connections) {
      const offered = new Set(offeredTools(connection).map((tool) => tool.name));
      servers[connection.context.server] = String(connection.value);
      if (offered.size > 0 && connection.context.resources) resources = true;
      if ((connection.value === 'ready' || connection.value === 'degraded') && connection.context.resources) resources = true;
      for (const tool of connection.context.tools) {
        known.add(tool.name);
        candidates.push({ descriptor: tool, index: index++, offered: offered.has(tool.name) });
      }
    }
    this.remote = { candidates, known, servers, resources };
    this.remoteDirty = false;
    this.all = undefined;
    this.version++;
    for (const agent of this.agents.values()) agent.dirty = true;
  }

  /** Why a tool joined: the first round, a search hit, its server coming up, the active skill changing, or the policy. */
  private addedReason(name: string, agent: AgentState, first: boolean): string {
    if (first) return 'initial';
    if (agent.hits.includes(name)) return 'tool_search';
    const server = this.remote.candidates.find((candidate) => candidate.descriptor.name === name)?.descriptor.server;
    if (server && agent.decidedWith?.servers[server] !== this.remote.servers[server]) return `server ${server} ${this.remote.servers[server] ?? 'ready'}`;
    const skill = agent.skill?.allowedTools ? agent.skill.name : undefined;
    if (skill !== agent.decidedWith?.skill) return skill ? `skill ${skill}` : 'skill ended';
    return 'policy';
  }

  private missingReason(name: string): RemovalReason {
    return this.remote.known.has(name) ? 'server-unavailable' : 'not-in-catalog';
  }

  private agent(actor: string): AgentState {
    let agent = this.agents.get(actor);
    if (!agent) {
      agent = this.freshAgent();
      // An unknown non-root actor gets no rights at all (nothing but what its task granted is ever visible).
      if (actor !== rootPath) agent.rights = { tools: new Set(), mode: 'plan' };
      this.agents.set(actor, agent);
      for (let index = actor.lastIndexOf('/'); index > 0; index = actor.lastIndexOf('/', index - 1)) this.ancestors.add(actor.slice(0, index));
    }
    return agent;
  }

  private freshAgent(): AgentState {
    return { visible: undefined, hits: [], streaks: new Map(), skill: undefined, lastInputTokens: 0, rights: undefined, dirty: true, pool: undefined, decidedWith: undefined };
  }
}

const isModelCall = (draft: FoldedRecord): boolean => draft.type === 'effect.requested' && (draft.data as { kind?: unknown }).kind === 'callModel';
