import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions } from '../command-options.js';

/** `rein skills list`: the skills a session in this workspace would index (project first, then the user's), and why any SKILL.md was skipped. */
export const registerSkills = (program: Command): void => {
  const skills = program.command('skills').description('the Agent Skills a session here would see');
  addCommonOptions(skills.command('list').description('every skill (name, scope, path, description) and every SKILL.md that was skipped, with why')).action(async (options: CommonOptions) => (await import('./skills.action.js')).skillsListCommand(options));
};
