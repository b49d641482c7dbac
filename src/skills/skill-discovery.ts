import { realpathSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { hostFileProblem, readHostFile } from '../util/read-regular-file.js';
import { surelyAbsent } from '../util/surely-absent.js';
import { homedir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import type { CapabilityProblem } from '../../models/capability.records.js';
import type { LoadableSkill } from '../capabilities/agent-capabilities.js';
import { mapAllowedTools, maxSkillFileBytes, parseSkillDocument } from './skill-format.js';

/** Where skills are looked for, in order (an earlier folder's skill shadows a later one of the same name). */
export interface SkillLocation {
  directory: string;
  scope: 'project' | 'user' | 'host';
}

/** The skill folders of a workspace (`.agents/skills`, `.claude/skills`) and of the user (`~/.agents/skills`). */
export const projectSkillDirectories = ['.agents/skills', '.claude/skills'] as const;

/** Skill options a harness takes (`createRein({ skills })`). */
export interface SkillOptions {
  /** More folders to search (after the workspace's, before the user's), each holding `<name>/SKILL.md` folders. */
  directories?: readonly string[];
  /** Search `~/.agents/skills` too (default true). */
  user?: boolean;
  /** The user's home (default `os.homedir()`), for tests and hosts with their own. */
  home?: string;
}

/** The locations to search for a workspace, project first. */
export const skillLocations = (workspace: string, options: SkillOptions = {}): SkillLocation[] => [
  ...projectSkillDirectories.map((directory) => ({ directory: join(workspace, directory), scope: 'project' as const })),
  ...(options.directories ?? []).map((directory) => ({ directory: resolve(workspace, directory), scope: 'host' as const })),
  ...(options.user === false ? [] : [{ directory: join(options.home ?? homedir(), '.agents', 'skills'), scope: 'user' as const }]),
];

/** How a skill's path is shown: relative to the workspace for a project skill, with `~` for the user's. */
export const displaySkillPath = (path: string, workspace: string, home: string): string => {
  const inWorkspace = relative(workspace, path);
  if (!inWorkspace.startsWith('..') && inWorkspace !== '') return inWorkspace;
  const inHome = relative(home, path);
  return !inHome.startsWith('..') && inHome !== '' ? `~/${inHome}` : path;
};

/** The workspace's real path (synchronous: the same realpath(3) without the async call's thread-pool hop), else as given. */
const realRoot = (workspace: string): string => {
  try {
    return realpathSync.native(workspace);
  } catch {
    return resolve(workspace);
  }
};

const isInsideRoot = (root: string, path: string): boolean => path.startsWith(root.endsWith(sep) ? root : root + sep);

const readCapped = async (path: string): Promise<string | { error: string; missing?: true }> => {
  const read = await readHostFile(path, { maxBytes: maxSkillFileBytes });
  if (read.ok) return read.bytes.toString('utf8');
  if (read.reason === 'missing') return { error: `cannot open SKILL.md (${read.detail})`, missing: true };
  return { error: hostFileProblem('SKILL.md', read) };
};

/**
 * Find the skills: every `<location>/<folder>/SKILL.md`, project folders first. A malformed SKILL.md, a name that
 * differs from its folder, or a name an earlier folder already has is reported as a problem and skipped — never
 * fatal. `known` says which tool names exist, to map `allowed-tools` (unknown names are reported, and grant nothing).
 */
export const discoverSkills = async (input: { workspace: string; options?: SkillOptions; known: (name: string) => boolean }): Promise<{ skills: LoadableSkill[]; problems: CapabilityProblem[] }> => {
  const home = input.options?.home ?? homedir();
  const skills: LoadableSkill[] = [];
  const problems: CapabilityProblem[] = [];
  const taken = new Map<string, string>();
  const workspaceRoot = realRoot(input.workspace);
  for (const location of skillLocations(input.workspace, input.options)) {
    // The usual skill folders are absent: asked without the exception a readdir of them throws.
    const folders = surelyAbsent(location.directory) ? [] : await readdir(location.directory, { withFileTypes: true }).catch(() => []);
    for (const folder of folders.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))) {
      if (!folder.isDirectory() && !folder.isSymbolicLink()) continue;
      const directory = join(location.directory, folder.name);
      const shown = displaySkillPath(join(directory, 'SKILL.md'), input.workspace, home);
      const root = await realpath(directory).catch(() => undefined);
      if (!root || !(await stat(root).then((info) => info.isDirectory()).catch(() => false))) continue;
      // The same real-path rules as loading (`skill`): a project skill lives in the workspace, and SKILL.md in its
      // folder. The index is model context, so a link must not bring text from elsewhere into it.
      if (location.scope === 'project' && !isInsideRoot(workspaceRoot, root)) {
        problems.push({ source: shown, reason: 'the skill folder links outside the workspace; it is not loaded' });
        continue;
      }
      const file = await realpath(join(root, 'SKILL.md')).catch(() => undefined);
      if (file === undefined) continue;
      if (!isInsideRoot(root, file)) {
        problems.push({ source: shown, reason: "SKILL.md links outside the skill's folder; it is not read" });
        continue;
      }
      const text = await readCapped(file);
      if (typeof text !== 'string') {
        if (text.missing) continue;
        problems.push({ source: shown, reason: text.error });
        continue;
      }
      const parsed = parseSkillDocument(text, folder.name);
      if (!parsed.ok) {
        problems.push({ source: shown, reason: parsed.reason });
        continue;
      }
      const { name, description, allowedTools } = parsed.value;
      const earlier = taken.get(name);
      if (earlier) {
        problems.push({ source: shown, reason: `skill "${name}" is shadowed by ${earlier}` });
        continue;
      }
      taken.set(name, shown);
      let tools: string[] | undefined;
      if (allowedTools) {
        const mapped = mapAllowedTools(allowedTools, input.known);
        tools = mapped.tools;
        if (mapped.unknown.length > 0) problems.push({ source: shown, reason: `allowed-tools names tools rein does not have (they grant nothing): ${mapped.unknown.join(', ')}` });
      }
      skills.push({ name, description, path: shown, scope: location.scope, root, ...(tools ? { allowedTools: tools } : {}) });
    }
  }
  return { skills, problems };
};
