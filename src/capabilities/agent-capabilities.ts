import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentCapabilities, CapabilityMatch, LoadableSkill } from './agent-capability-types.js';
import { rankBm25, type SearchDocument } from './bm25.js';
import type { CapabilityDeriver, ConnectionView } from './capability-deriver.js';
import { skillToolName, toolSearchName } from './visible-set.js';

export type { AgentCapabilities, CapabilityMatch, LoadableSkill } from './agent-capability-types.js';

export interface AgentCapabilitiesOptions {
  actor: string;
  deriver: CapabilityDeriver;
  registry: ToolRegistry;
  skills: readonly LoadableSkill[];
  connections: () => readonly ConnectionView[];
}

const shorten = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * Search and skill lookup for one agent. Search covers the tools the agent could be shown this round (visible or
 * deferred) and, when it may load skills, the skill index; it never reveals a tool the permission mode, a deny rule,
 * the agent's rights, an active skill or a down server keeps from it. A match is not a permission.
 */
export const agentCapabilitiesOf = (options: AgentCapabilitiesOptions): AgentCapabilities => {
  const skillsByName = new Map(options.skills.map((skill) => [skill.name, skill]));
  const reachable = () => options.deriver.reachable(options.actor, options.connections);
  return {
    search(query, limit) {
      const { visible, deferred } = reachable();
      const documents: Array<SearchDocument & { kind: 'tool' | 'skill'; server?: string; visible: boolean }> = [];
      for (const name of [...visible, ...deferred]) {
        if (name === toolSearchName) continue;
        const tool = options.registry.get(name);
        if (!tool) continue;
        const server = /^mcp__/.test(name) ? name.split('__')[1] : undefined;
        documents.push({ id: name, name, description: tool.description, kind: 'tool', ...(server ? { server } : {}), visible: visible.has(name) });
      }
      if (visible.has(skillToolName) || deferred.has(skillToolName)) {
        for (const skill of options.skills) documents.push({ id: `skill:${skill.name}`, name: skill.name, description: skill.description, kind: 'skill', visible: false });
      }
      const byId = new Map(documents.map((document) => [document.id, document]));
      const matches = rankBm25(documents, query, limit).map((match): CapabilityMatch => {
        const document = byId.get(match.id)!;
        const reasons = [...match.nameTerms.map((term) => `name matches "${term}"`), ...match.descriptionTerms.filter((term) => !match.nameTerms.includes(term)).map((term) => `description matches "${term}"`)];
        return { name: document.name, kind: document.kind, ...(document.server ? { server: document.server } : {}), description: shorten(document.description, 240), score: match.score, reasons, visible: document.visible };
      });
      return { matches, deferred: deferred.size };
    },
    skill(name) {
      const { visible, deferred } = reachable();
      if (!visible.has(skillToolName) && !deferred.has(skillToolName)) return undefined;
      return skillsByName.get(name);
    },
  };
};
