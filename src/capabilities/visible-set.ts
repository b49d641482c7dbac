import type { CapabilityDescriptor, DiscoveryPolicy, RemovalReason } from '../../models/capability.records.js';
import type { PermissionMode } from '../../models/permission.records.js';
import { patternMatches } from '../policy/permission-rules.js';

/** The tools that are never deferred while they are permitted: the search entry point and the skill loader. */
export const toolSearchName = 'tool_search';
export const skillToolName = 'skill';
/** A child agent's report tool: always visible to children (its schema is the child's contract, not in the catalog). */
export const reportToolName = 'submit_report';

/** A candidate of the catalog in its catalog position (built-in and host tools first, then MCP tools by server). */
export interface Candidate {
  descriptor: CapabilityDescriptor;
  index: number;
  /** False for an MCP tool whose server is not ready or degraded right now. */
  offered: boolean;
}

/** What one agent's round is decided from, besides the catalog. */
export interface SelectionInput {
  candidates: readonly Candidate[];
  policy: DiscoveryPolicy;
  mode: PermissionMode;
  /** A child agent's tools (its task package); undefined for the root agent, which may see the whole catalog. */
  rights?: ReadonlySet<string>;
  /** Names `tool_search` found for this agent, most wanted first: the newest search's hits in its ranking, then older searches'. */
  hits: readonly string[];
  /** Consecutive invalid calls per tool. */
  streaks: ReadonlyMap<string, number>;
  /** The active skill's allowed tools (rein names or globs); undefined when no active skill narrows the tools. */
  skillAllowed?: readonly string[];
  /** Input tokens of this agent's last model call. */
  lastInputTokens: number;
  /** Whether some offered server has resources (for `list_mcp_resources` / `read_mcp_resource`). */
  resourcesOffered: boolean;
}

/**
 * The decided set: visible names in catalog order with their schema digests, how many were deferred, and why a
 * candidate is out (`excluded` holds the reasons other than deferral; a candidate that is neither visible nor in it
 * was deferred).
 */
export interface Selection {
  visible: Array<{ name: string; schemaDigest: string }>;
  deferred: number;
  excluded: Map<string, RemovalReason>;
  lowered: string[];
  toolBudget: number;
}

/** Why a candidate of this selection is not visible (undefined: it is visible, or not a candidate at all). */
export const exclusionOf = (selection: Selection, candidates: readonly Candidate[], name: string): RemovalReason | undefined => {
  const reason = selection.excluded.get(name);
  if (reason) return reason;
  if (selection.visible.some((entry) => entry.name === name)) return undefined;
  return candidates.some((candidate) => candidate.descriptor.name === name) ? 'deferred' : undefined;
};

/** Invalid calls in a row after which a tool loses its priority (it is deferred first when the set is too large). */
export const invalidStreakLimit = 3;

/** The tokens tool schemas may take this round: a share of the window, halved once the last input filled 3/4 of it. */
export const toolBudgetOf = (policy: DiscoveryPolicy, lastInputTokens: number): number => {
  const base = Math.floor(policy.toolShare * policy.contextWindow);
  return lastInputTokens > policy.contextWindow * 0.75 ? Math.floor(base / 2) : base;
};

const matchesAny = (patterns: readonly string[], name: string): boolean => patterns.some((pattern) => pattern === name || (/[*?]/.test(pattern) && patternMatches(pattern, name)));

const permitted = (descriptor: CapabilityDescriptor, mode: PermissionMode, hidden: readonly string[]): boolean => {
  if (mode === 'plan' && !descriptor.readOnly && descriptor.risk !== 'delegate') return false;
  return !hidden.some((pattern) => pattern === '*' || matchesAny([pattern], descriptor.name));
};

/** What a pool is built from: everything but the per-round inputs (hits, invalid calls, the last input's size). */
export type PoolInput = Omit<SelectionInput, 'hits' | 'streaks' | 'lastInputTokens'>;

/**
 * The candidates an agent may be shown at all — offered, permitted, within its rights and its active skill — sorted
 * into pinned tools, `tool_search`, and local and MCP tools in catalog order, with why each other candidate is out.
 * It depends only on the catalog, the servers, the agent's rights and mode and its active skill, so the deriver keeps
 * it until one of those changes; each round then costs about the visible limit, not the catalog's size.
 */
export class SelectionPool {
  readonly excluded = new Map<string, RemovalReason>();
  readonly pinned: Candidate[] = [];
  readonly search: Candidate | undefined;
  readonly local: Candidate[] = [];
  readonly remote: Candidate[] = [];
  readonly byName = new Map<string, Candidate>();
  readonly tokens: { local: number; remote: number } = { local: 0, remote: 0 };

  constructor(readonly input: PoolInput) {
    let search: Candidate | undefined;
    for (const candidate of input.candidates) {
      const { descriptor } = candidate;
      const name = descriptor.name;
      if (!candidate.offered || (descriptor.requires === 'mcp-resources' && !input.resourcesOffered)) {
        this.excluded.set(name, 'server-unavailable');
        continue;
      }
      if ((input.rights && !input.rights.has(name)) || !permitted(descriptor, input.mode, input.policy.hidden)) {
        this.excluded.set(name, 'permission');
        continue;
      }
      if (input.skillAllowed && !matchesAny(input.skillAllowed, name) && name !== skillToolName && name !== toolSearchName && name !== reportToolName) {
        this.excluded.set(name, 'skill');
        continue;
      }
      if (name === toolSearchName) search = candidate;
      else if (name === skillToolName || name === reportToolName) this.pinned.push(candidate);
      else {
        const local = descriptor.source !== 'mcp';
        (local ? this.local : this.remote).push(candidate);
        this.tokens[local ? 'local' : 'remote'] += descriptor.tokens;
        this.byName.set(name, candidate);
      }
    }
    this.search = search;
  }

  /** How many ranked candidates (neither pinned nor `tool_search`) the pool holds. */
  get size(): number {
    return this.local.length + this.remote.length;
  }

  /** Decide one round: the ranking of `selectVisibleSet`, walking only as far as the visible limit needs. */
  select(round: Pick<SelectionInput, 'hits' | 'streaks' | 'lastInputTokens'>): Selection {
    const { policy } = this.input;
    const lowered = new Set<string>();
    for (const [name, streak] of round.streaks) if (streak >= invalidStreakLimit && this.byName.has(name)) lowered.add(name);
    const toolBudget = toolBudgetOf(policy, round.lastInputTokens);
    const pinned = [...this.pinned];
    let taken: Candidate[];
    let deferred = 0;
    if (pinned.length + this.size <= policy.visibleLimit && this.tokens.local + this.tokens.remote <= toolBudget) {
      taken = [...this.local, ...this.remote];
    } else {
      const room = Math.max(0, policy.visibleLimit - pinned.length - (this.search ? 1 : 0));
      taken = [];
      const chosen = new Set<string>();
      let tokens = 0;
      const offer = (candidate: Candidate): void => {
        const { descriptor } = candidate;
        if (taken.length < room && (descriptor.source !== 'mcp' || tokens + descriptor.tokens <= toolBudget)) {
          taken.push(candidate);
          chosen.add(descriptor.name);
          tokens += descriptor.tokens;
        }
      };
      // Hits first (the newest search's best first), then local and MCP tools in catalog order, then the lowered ones.
      for (let index = 0; index < round.hits.length && taken.length < room; index++) {
        const hit = this.byName.get(round.hits[index]!);
        if (hit && !lowered.has(hit.descriptor.name) && !chosen.has(hit.descriptor.name)) offer(hit);
      }
      for (const group of [this.local, this.remote]) {
        for (const candidate of group) {
          if (taken.length >= room) break;
          if (!chosen.has(candidate.descriptor.name) && !lowered.has(candidate.descriptor.name)) offer(candidate);
        }
      }
      if (taken.length < room && lowered.size > 0) {
        const low = [...lowered].map((name) => this.byName.get(name)!).sort((left, right) => left.index - right.index);
        for (const candidate of [...low.filter((entry) => entry.descriptor.source !== 'mcp'), ...low.filter((entry) => entry.descriptor.source === 'mcp')]) offer(candidate);
      }
      deferred = this.size - taken.length;
      if (this.search && deferred > 0) pinned.push(this.search);
    }
    const visible = [...pinned, ...taken].sort((left, right) => left.index - right.index).map((candidate) => ({ name: candidate.descriptor.name, schemaDigest: candidate.descriptor.schemaDigest }));
    const loweredInOrder = [...lowered].map((name) => this.byName.get(name)!).sort((left, right) => left.index - right.index).map((candidate) => candidate.descriptor.name);
    return { visible, deferred, excluded: this.excluded, lowered: loweredInOrder, toolBudget };
  }
}

/**
 * The discovery policy (pure, deterministic): from the catalog keep what is offered (its server up), permitted (the
 * mode and tool-wide deny rules), within the agent's rights and the active skill's allowed tools; if that is more
 * than the visible limit or the tools' schemas exceed the token budget, rank — `tool_search` hits first (the newest
 * search first, each search's hits in its ranking), then built-in and host tools, then MCP tools, each lowered below the rest after three invalid calls in a
 * row, ties in catalog order — and defer the rest behind `tool_search`. MCP schemas must fit the budget; local tools
 * are never deferred for tokens. `skill` and `submit_report` are never deferred.
 */
export const selectVisibleSet = (input: SelectionInput): Selection => new SelectionPool(input).select(input);
