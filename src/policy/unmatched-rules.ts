import { isToolGlob, ruleNamesTool, ruleSubject, type PermissionRule } from './permission-rules.js';

/** A deny or ask rule for MCP or plugin tools that names no tool the session has, with the tool it most likely meant. */
export interface UnmatchedRule {
  rule: string;
  suggestion?: string;
}

/** A tool name as people misspell it: case, `-` and `_` do not count. */
const loose = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/**
 * The deny and ask rules whose tool part is namespaced — an MCP tool (`mcp__<server>__<tool>`, or a glob there) or a
 * plugin's (`<plugin>__<tool>`) — and names none of `tools` (every tool the session has once its servers are up and
 * its plugins loaded). rein's own tool names are checked when a rule is given (`USAGE`); namespaced names can be
 * checked only then, and a rule that matches nothing guards nothing: `deny mcp__everything__get_env` does not stop
 * `mcp__everything__get-env`.
 */
export const unmatchedNamespacedRules = (rules: readonly PermissionRule[], tools: readonly string[]): UnmatchedRule[] =>
  rules
    .filter((rule) => (rule.action === 'deny' || rule.action === 'ask') && rule.tool.includes('__'))
    .filter((rule) => !tools.some((tool) => ruleNamesTool(rule, tool)))
    .map((rule) => {
      const suggestion = isToolGlob(rule.tool) ? undefined : tools.find((tool) => loose(tool) === loose(rule.tool));
      return { rule: `${rule.action} ${ruleSubject(rule)}`, ...(suggestion ? { suggestion } : {}) };
    });

/** The `permission.rule-unmatched` facts for the session's tools as they are now (none when every rule names a tool). */
export const unmatchedRuleFacts = (rules: readonly PermissionRule[], tools: readonly string[]): Array<{ type: 'permission.rule-unmatched'; data: Record<string, unknown> }> =>
  unmatchedNamespacedRules(rules, tools).map((data) => ({ type: 'permission.rule-unmatched' as const, data: { ...data } }));
