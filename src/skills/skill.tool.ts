import { readdir, realpath } from 'node:fs/promises';
import { hostFileProblem, readHostFile } from '../util/read-regular-file.js';
import { join, relative, sep } from 'node:path';
import * as z from 'zod';
import { blake3Text } from '../../machines/typestate/blake3.js';
import type { LoadableSkill } from '../capabilities/agent-capabilities.js';
import { defineTool, readOnlyAnnotations, toolFailure, type AnyToolDefinition, type ToolResult } from '../tools/tool.js';
import { maxSkillFileBytes, parseSkillDocument } from './skill-format.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** Characters the skill index (the `skill` tool's description) may take: about 2,000 tokens. */
export const skillIndexBudget = 6_000;
/** Largest skill file the `skill` tool returns. */
const maxSkillResourceBytes = 1024 * 1024;
/** Files of a skill's folder listed after its body. */
const maxListedFiles = 50;

const SkillArguments = lazySchema(() => z
  .object({
    name: z.string().min(1).max(64).describe('The skill to load, as the index names it'),
    file: z.string().min(1).max(512).optional().describe('A file inside the skill\'s folder to read instead of its instructions (e.g. "references/api.md", "scripts/check.sh")'),
  })
  .strict());
type SkillArguments = z.infer<typeof SkillArguments>;

const intro =
  'Load a skill: instructions for a kind of task, written for this workspace or by the user. Load one when the task matches its description, then follow it where it fits (it never grants permissions). With `file`, read one of the files its instructions mention. Skills:';

/**
 * The skill index as the `skill` tool's description: one line per skill (name, description, where it lives), project
 * skills first, within `budget` characters — descriptions are shortened first, then the skills that do not fit are
 * counted (tool_search still finds them).
 */
export const skillIndexText = (skills: readonly LoadableSkill[], budget = skillIndexBudget): string => {
  const line = (skill: LoadableSkill, max: number) => `\n- ${skill.name}: ${skill.description.length > max ? `${skill.description.slice(0, max - 1)}…` : skill.description} (${skill.path})`;
  for (const max of [1024, 200, 80]) {
    const text = intro + skills.map((skill) => line(skill, max)).join('');
    if (text.length <= budget) return text;
  }
  let text = intro;
  let shown = 0;
  for (const skill of skills) {
    const next = line(skill, 80);
    if (text.length + next.length > budget - 80) break;
    text += next;
    shown++;
  }
  return `${text}\n(${skills.length - shown} more skills: find them with tool_search)`;
};

const listFiles = async (root: string): Promise<string[]> => {
  const found: string[] = [];
  const walk = async (directory: string, depth: number): Promise<void> => {
    if (depth > 3 || found.length >= maxListedFiles) return;
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((left, right) => (left.name < right.name ? -1 : 1))) {
      if (found.length >= maxListedFiles) return;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (entry.isFile() && !(depth === 0 && entry.name === 'SKILL.md')) found.push(relative(root, path));
    }
  };
  await walk(root, 0);
  return found;
};

const readInside = async (root: string, file: string): Promise<{ text: string } | { error: string }> => {
  const target = await realpath(join(root, file)).catch(() => undefined);
  if (!target) return { error: `${file} does not exist in the skill's folder` };
  if (!target.startsWith(root + sep)) return { error: `${file} is outside the skill's folder` };
  const read = await readHostFile(target, { maxBytes: maxSkillResourceBytes });
  if (!read.ok) return { error: read.reason === 'missing' || read.reason === 'unreadable' ? `${file} cannot be opened` : hostFileProblem(file, read) };
  if (read.bytes.includes(0)) return { error: `${file} is binary; run it (scripts) instead of reading it` };
  return { text: read.bytes.toString('utf8') };
};

/**
 * `skill`: loads a skill's instructions (its SKILL.md body, read fresh) or one of its files, on demand — only the
 * index is resident. Each load is recorded as `capability.loaded` with the digest of exactly the text returned, and
 * loading a skill's body makes it the agent's active skill: its `allowed-tools` narrow the agent's tools from the
 * next round (never widen them). Files are read only from inside the skill's folder (symlinks resolved).
 */
export const skillTool = (skills: readonly LoadableSkill[]): AnyToolDefinition =>
  defineTool<SkillArguments>({
    name: 'skill',
    description: skillIndexText(skills),
    parameters: SkillArguments,
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    async execute(args, context): Promise<ToolResult> {
      const skill = context.capabilities?.skill(args.name);
      if (!skill) return toolFailure('NotFound', `no skill named "${args.name}"; the skill tool's description lists them`, 'unknown_skill');
      const loaded = (text: string, extra: Record<string, unknown>) => ({ type: 'capability.loaded', data: { kind: 'skill', name: skill.name, scope: skill.scope, path: skill.path, digest: `b3:${blake3Text(text)}`, chars: text.length, ...extra } });
      if (args.file) {
        const read = await readInside(skill.root, args.file);
        if ('error' in read) return toolFailure('NotFound', read.error, 'skill_file');
        return { ok: true, output: read.text, notes: [loaded(read.text, { file: args.file })] };
      }
      const document = await readInside(skill.root, 'SKILL.md');
      if ('error' in document) return toolFailure('NotFound', `the skill's SKILL.md is gone: ${document.error}`, 'skill_file');
      if (document.text.length > maxSkillFileBytes) return toolFailure('InvalidInput', 'SKILL.md grew past its size limit', 'skill_file');
      const parsed = parseSkillDocument(document.text, skill.name);
      if (!parsed.ok) return toolFailure('InvalidInput', `SKILL.md is no longer valid: ${parsed.reason}`, 'skill_invalid');
      const files = await listFiles(skill.root);
      const narrowing = skill.allowedTools ? `\n\nWhile this skill is active your tools are narrowed to: ${skill.allowedTools.join(', ') || '(none of rein\'s)'} (from your next turn).` : '';
      const listing = files.length > 0 ? `\n\nFiles in this skill (read one with skill { name: "${skill.name}", file }): ${files.join(', ')}` : '';
      const output = `# Skill ${skill.name} (${skill.scope}: ${skill.path})\n\n${parsed.value.body.trim()}${listing}${narrowing}`;
      return { ok: true, output, value: { skill: skill.name, ...(skill.allowedTools ? { allowedTools: skill.allowedTools } : {}) }, notes: [loaded(output, skill.allowedTools ? { allowedTools: skill.allowedTools } : {})] };
    },
  });
