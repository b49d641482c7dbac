import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../../machines/typestate/canonical-json.js';
import { configFileName } from '../providers/config-file-name.js';
import type { TrustStatus, TrustStore, TrustSubject } from '../trust/trust-store.js';
import { commandHookEvents, type CommandHookEvent, type CommandHooksConfig } from './command-hooks.js';

/**
 * The command hooks a workspace's `rein.config.json` asks rein to run, with the trust subject they are bound to and
 * whether the user trusts them as they are. A hook decides what the model may do, and one that says `"sandbox": false`
 * runs on the host with the user's environment, so a repository's hooks run only once the user trusted that exact
 * `hooks` section — as its MCP servers do.
 */
export interface ProjectHooks {
  /** Workspace-relative name of the file (`rein.config.json`). */
  file: string;
  subject: TrustSubject;
  status: TrustStatus;
  hooks: CommandHooksConfig;
}

/** The digest a hooks trust decision is bound to: SHA-256 of the canonical JSON of the file's `hooks`. */
export const hooksDigest = (hooks: CommandHooksConfig): string => `sha256:${createHash('sha256').update(canonicalJson(hooks)).digest('hex')}`;

/** How many command hooks a `hooks` section holds, per event (events without any are left out). */
export const hookCounts = (hooks: CommandHooksConfig): Array<[CommandHookEvent, number]> =>
  (Object.keys(commandHookEvents) as CommandHookEvent[]).flatMap((event) => {
    const count = (hooks[event] ?? []).reduce((sum, group) => sum + group.hooks.length, 0);
    return count > 0 ? [[event, count] as [CommandHookEvent, number]] : [];
  });

/**
 * The command hooks of `<workspace>/rein.config.json` (`config.hooks`, as `loadWorkspaceConfig` parsed it) with their
 * trust status, or `undefined` when the file has no hook to run. The subject is `{ kind: 'hooks', path: <the
 * workspace's real path>/rein.config.json }` (a link is read, but trust never follows it to another place) with the
 * digest of the section, so trusting one workspace's hooks never trusts another's, and any change to the section (a
 * command, a matcher, a timeout) asks again.
 */
export const loadProjectHooks = async (workspace: string, hooks: CommandHooksConfig | undefined, trust: TrustStore): Promise<ProjectHooks | undefined> => {
  if (!hooks || hookCounts(hooks).length === 0) return undefined;
  // The file's place in the (canonical) workspace, never a link's target: hooks run their commands here.
  const subject: TrustSubject = { kind: 'hooks', path: join(await realpath(workspace), configFileName), digest: hooksDigest(hooks) };
  return { file: configFileName, subject, status: await trust.status(subject), hooks };
};

/**
 * A workspace file's hooks as rein runs them: every hook that does not say `"sandbox": false` runs inside the bash
 * sandbox. What such a hook runs — `npm test` runs `package.json`'s script and the test files, `npx prettier` runs
 * `node_modules` — is workspace code the model can edit, so it gets no more than the model's own commands get.
 */
export const sandboxedByDefault = (hooks: CommandHooksConfig): CommandHooksConfig =>
  Object.fromEntries(
    Object.entries(hooks).map(([event, groups]) => [event, groups?.map((group) => ({ ...group, hooks: group.hooks.map((hook) => ({ ...hook, sandbox: hook.sandbox ?? true })) }))]),
  ) as CommandHooksConfig;

/** One line per command, for the trust prompt: the event, the matcher, the command as it would run and where. */
export const describeProjectHooks = (project: ProjectHooks): string => {
  const lines: string[] = [];
  let onHost = 0;
  for (const event of Object.keys(commandHookEvents) as CommandHookEvent[]) {
    for (const group of project.hooks[event] ?? []) {
      for (const hook of group.hooks) {
        if (hook.sandbox === false) onHost++;
        lines.push(`  ${event}${group.matcher ? ` (${group.matcher})` : ''}: ${hook.command}${hook.sandbox === false ? '   [on the host: your permissions and environment, outside the sandbox]' : ''}`);
      }
    }
  }
  const change = project.status === 'changed' ? ' They changed since you trusted them.' : '';
  const where =
    onHost === 0
      ? 'they run inside the bash sandbox (the workspace, no network, your environment cleared)'
      : `${onHost === lines.length ? 'all' : onHost} of them ("sandbox": false) run on the host with your permissions and your environment, outside the sandbox — and any workspace file such a command runs (a script, package.json, node_modules, a Makefile) is one the model can edit; the others run inside the bash sandbox`;
  return `${project.file} asks rein to run ${lines.length} command hook(s); ${where}.${change}\n${lines.join('\n')}`;
};

/** The stderr line for hooks that were not loaded because they are not trusted (or changed since). */
export const untrustedHooksWarning = (project: ProjectHooks): string => {
  const counts = hookCounts(project.hooks);
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  const state = project.status === 'changed' ? 'changed since they were trusted' : 'are not trusted';
  return `the command hooks of ${project.file} ${state}: its ${total} hook(s) (${counts.map(([event]) => event).join(', ')}) were not loaded (trust them with \`rein hooks trust\` or --yes)`;
};
