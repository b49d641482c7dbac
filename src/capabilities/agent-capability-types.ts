import type { SkillEntry } from '../../models/capability.records.js';

/*
 * What a tool sees of the session's capabilities (`ToolContext.capabilities`), apart from the code that builds it
 * (agent-capabilities.ts): that code reads the tool registry, which reads the tool contract, which names these types;
 * kept together, the three files imported each other.
 */

/** A skill the `skill` tool can load: its index entry and the folder its files live in. */
export interface LoadableSkill extends SkillEntry {
  /** The skill's folder (absolute, canonical). */
  root: string;
}

/** One `tool_search` result: what it is, whether the agent sees it now, and why it matched. */
export interface CapabilityMatch {
  name: string;
  kind: 'tool' | 'skill';
  server?: string;
  description: string;
  score: number;
  reasons: string[];
  /** True when it is in the agent's visible set already. */
  visible: boolean;
}

/** The session's capabilities as one agent sees them: search over what it may use, and the skills it may load. */
export interface AgentCapabilities {
  /** Rank what this agent could be shown (permitted, offered, within its rights) against `query`. */
  search(query: string, limit: number): { matches: CapabilityMatch[]; deferred: number };
  /** A skill of the index by name (only when the agent may use the `skill` tool). */
  skill(name: string): LoadableSkill | undefined;
}
