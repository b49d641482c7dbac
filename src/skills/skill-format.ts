import { createRequire } from 'node:module';

/** yaml (70-odd CommonJS files) is loaded on the first skill read, not when rein is imported. */
let yaml: typeof import('yaml') | undefined;
const parseYaml = (text: string): unknown => (yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);

/** A SKILL.md as the Agent Skills format defines it (agentskills.io): frontmatter fields and the Markdown body. */
export interface SkillDocument {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** `allowed-tools` as written (tool names, `Bash(git:*)`-style patterns, space- or comma-separated, or a list). */
  allowedTools?: string[];
  body: string;
}

/** The name rule: 1–64 lowercase letters, digits and single hyphens, not starting or ending with one. */
export const skillNamePattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Largest SKILL.md rein reads. */
export const maxSkillFileBytes = 256 * 1024;

const frontmatterPattern = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Split `allowed-tools` into entries: a YAML list, or a string separated by spaces or commas (parentheses kept whole). */
const allowedToolsOf = (value: unknown): string[] | { error: string } => {
  if (Array.isArray(value)) {
    if (!value.every((entry) => typeof entry === 'string')) return { error: 'allowed-tools must be a list of tool names' };
    return value.map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  }
  if (typeof value !== 'string') return { error: 'allowed-tools must be a string or a list' };
  return [...value.matchAll(/[^\s,()]+(?:\([^)]*\))?/g)].map((match) => match[0]);
};

/** Frontmatter made only of `key: value` lines (values taken verbatim), or undefined when it is anything else. */
const flatFrontmatter = (text: string): Record<string, string> | undefined => {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const match = /^([A-Za-z][A-Za-z0-9_-]*):[ \t]+(.*\S)[ \t]*$/.exec(line);
    if (!match) return undefined;
    fields[match[1]!] = match[2]!;
  }
  return fields;
};

/**
 * Parse a SKILL.md: YAML frontmatter between `---` lines, then the body. Returns the document, or why it is not a
 * valid skill (the caller reports and skips it). `folder` is the name of the directory holding it, which the skill's
 * `name` must equal. Unknown frontmatter fields are ignored (other harnesses add their own).
 */
export const parseSkillDocument = (text: string, folder: string): { ok: true; value: SkillDocument } | { ok: false; reason: string } => {
  const match = frontmatterPattern.exec(text.replace(/^\uFEFF/, ''));
  if (!match) return { ok: false, reason: 'SKILL.md must start with YAML frontmatter between --- lines' };
  let data: unknown;
  try {
    data = parseYaml(match[1]!);
  } catch (error) {
    // Many skills write `description: Fix tests: reproduce, …` unquoted, which strict YAML refuses; a flat list of
    // `key: value` lines is read as written.
    data = flatFrontmatter(match[1]!);
    if (data === undefined) return { ok: false, reason: `the frontmatter is not valid YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, reason: 'the frontmatter must be a YAML mapping' };
  const fields = data as Record<string, unknown>;
  const name = fields.name;
  if (typeof name !== 'string' || name.length === 0) return { ok: false, reason: 'name is required' };
  if (name.length > 64) return { ok: false, reason: `name is ${name.length} characters; at most 64` };
  if (!skillNamePattern.test(name)) return { ok: false, reason: `name "${name}" may only hold lowercase letters, digits and single hyphens, not at the start or end` };
  if (name !== folder) return { ok: false, reason: `name "${name}" must equal its folder's name "${folder}"` };
  const description = fields.description;
  if (typeof description !== 'string' || description.trim().length === 0) return { ok: false, reason: 'description is required' };
  if (description.length > 1024) return { ok: false, reason: `description is ${description.length} characters; at most 1,024` };
  const document: SkillDocument = { name, description: description.trim(), body: text.slice(match[0].length + (text.startsWith('\uFEFF') ? 1 : 0)) };
  if (fields.license !== undefined) {
    if (typeof fields.license !== 'string') return { ok: false, reason: 'license must be a string' };
    document.license = fields.license;
  }
  if (fields.compatibility !== undefined) {
    if (typeof fields.compatibility !== 'string' || fields.compatibility.length === 0 || fields.compatibility.length > 500) return { ok: false, reason: 'compatibility must be a string of 1–500 characters' };
    document.compatibility = fields.compatibility;
  }
  if (fields.metadata !== undefined) {
    const metadata = fields.metadata;
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return { ok: false, reason: 'metadata must be a mapping of strings' };
    const entries = Object.entries(metadata as Record<string, unknown>);
    if (!entries.every(([, value]) => typeof value === 'string')) return { ok: false, reason: 'metadata values must be strings' };
    document.metadata = Object.fromEntries(entries) as Record<string, string>;
  }
  if (fields['allowed-tools'] !== undefined) {
    const allowed = allowedToolsOf(fields['allowed-tools']);
    if (!Array.isArray(allowed)) return { ok: false, reason: allowed.error };
    document.allowedTools = allowed;
  }
  return { ok: true, value: document };
};

/** The other harnesses' tool names rein maps to its own (`Read` → `read`, `LS` → `list_dir`, …). */
const toolAliases: Readonly<Record<string, string>> = {
  read: 'read',
  write: 'write',
  edit: 'edit',
  multiedit: 'edit',
  glob: 'glob',
  grep: 'grep',
  bash: 'bash',
  ls: 'list_dir',
  task: 'delegate_task',
  skill: 'skill',
  toolsearch: 'tool_search',
};

/**
 * Map a skill's `allowed-tools` to rein tool names: exact rein names (and `mcp__…` globs) stay, other harnesses'
 * names map through the alias table (`Bash(git:*)` → `bash`), the rest are unknown (they grant nothing).
 */
export const mapAllowedTools = (entries: readonly string[], known: (name: string) => boolean): { tools: string[]; unknown: string[] } => {
  const tools: string[] = [];
  const unknown: string[] = [];
  for (const entry of entries) {
    const base = entry.replace(/\(.*\)$/, '');
    const candidate = known(base) || /[*?]/.test(base) ? base : toolAliases[base.toLowerCase().replace(/[_-]/g, '')];
    if (candidate && (known(candidate) || /[*?]/.test(candidate))) {
      if (!tools.includes(candidate)) tools.push(candidate);
    } else unknown.push(entry);
  }
  return { tools, unknown };
};
