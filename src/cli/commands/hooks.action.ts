import { printJson, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { CommonOptions } from '../command-options.js';
import { commandHookRegistrations } from '../../hooks/command-hooks.js';
import { loadProjectHooks } from '../../hooks/project-hooks.js';
import { loadWorkspaceConfig } from '../../providers/provider-settings.js';
import { TrustStore } from '../../trust/trust-store.js';

/** `rein hooks trust`: trust the workspace's command hooks as they are now. */
export const hooksTrustCommand = async (options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const trust = new TrustStore();
  const project = await loadProjectHooks(workspace, (await loadWorkspaceConfig(workspace))?.hooks, trust);
  if (!project) {
    if (!options.json) printText('no command hooks to trust ("hooks" in rein.config.json)\n');
    return;
  }
  if (project.status !== 'trusted') await trust.trust(project.subject);
  const hooks = commandHookRegistrations(project.hooks, { workspace }).map((hook) => hook.id);
  if (options.json) return printJson({ file: project.file, digest: project.subject.digest, hooks, was: project.status });
  printText(`trusted the command hooks of ${project.file} (${project.subject.digest.slice(0, 19)}…): ${hooks.join(', ')}${project.status === 'trusted' ? ' (already trusted)' : ''}\n`);
};
