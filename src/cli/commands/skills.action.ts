import { printJson, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { CommonOptions } from '../command-options.js';
import { discoverSkills } from '../../skills/skill-discovery.js';
import { builtinTools } from '../../tools/builtin-tools.js';

/** `rein skills list`: the skills a session here would index, and every SKILL.md that was skipped with why. */
export const skillsListCommand = async (options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const known = new Set([...builtinTools().map((tool) => tool.name), 'tool_search', 'skill']);
  const found = await discoverSkills({ workspace, known: (name) => known.has(name) || name.startsWith('mcp__') });
  if (options.json) {
    for (const { root: _root, ...skill } of found.skills) printJson(skill);
    for (const problem of found.problems) printJson({ problem });
    return;
  }
  const lines = [
    ...found.skills.map((skill) => `${skill.name}  ${skill.scope}  ${skill.path}  ${skill.description.split('\n')[0]!.slice(0, 100)}${skill.allowedTools ? `  (tools: ${skill.allowedTools.join(', ')})` : ''}`),
    ...found.problems.map((problem) => `✗ ${problem.source}: ${problem.reason}`),
  ];
  printText(lines.length === 0 ? 'no skills (.agents/skills, .claude/skills, ~/.agents/skills)\n' : lines.map((line) => `${line}\n`).join(''));
};
