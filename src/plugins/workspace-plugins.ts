import { isAbsolute, relative } from 'node:path';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import { hostHooksOutsideWorkspace } from '../hooks/hook-launchers.js';
import { loadProjectHooks, sandboxedByDefault, untrustedHooksWarning, type ProjectHooks } from '../hooks/project-hooks.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';
import { configFileName } from '../providers/config-file-name.js';
import { TrustStore, trustFilePath } from '../trust/trust-store.js';
import type { PluginSpec } from './plugin-host.js';
import type { ReinPlugin } from './plugin-contract.js';
import { discoverPlugins, pluginSpecsOf } from './plugin-loader.js';
import { PluginError } from './plugin-errors.js';
import { fileProjectTrust, type ProjectTrust } from './project-trust.js';

/**
 * What a session in a workspace runs with: its plugin specs, the command hooks of `rein.config.json` (only when the
 * user trusts them), and warnings. `untrustedHooks`: the hooks that were left out because they are not trusted (or
 * changed since), for listings.
 */
export interface WorkspacePlugins {
  plugins: PluginSpec[];
  hooks?: CommandHooksConfig;
  untrustedHooks?: ProjectHooks;
  warnings: string[];
}

/**
 * The plugins and command hooks a session in `workspace` gets, as `rein run` loads them: user plugins (from the
 * config home `env` names), the project's (`.rein-plugins/`, `plugins` in `rein.config.json`; enabled only when
 * `trust` says the user trusted them), the `cli` directories (`--plugin`), each project plugin's `pluginConfig` (a user or `--plugin` plugin's is ignored, with a
 * warning: the workspace file may configure only its own plugins), and the
 * `hooks` of `rein.config.json` — loaded only when the trust store (`hooksTrust`, default the one `env` names) holds
 * that exact section: a repository's hooks run commands outside the sandbox, so it cannot trust them itself.
 * `settleTrust` may record trust decisions for the discovered plugins before their specs are built, and
 * `settleHooksTrust` for the hooks (the CLI's `--yes` and its prompt on a TTY); both return warnings. Without them
 * trust is only read (a worker): an untrusted project plugin stays disabled and untrusted hooks are not loaded, each
 * with a warning. Reading manifests and hooks runs no plugin code and no command.
 */
export const workspacePlugins = async (options: {
  workspace: string;
  cli?: readonly string[];
  env?: Record<string, string | undefined>;
  trust?: ProjectTrust;
  hooksTrust?: TrustStore;
  settleTrust?: (discovered: Awaited<ReturnType<typeof discoverPlugins>>, trust: ProjectTrust) => Promise<string[]>;
  settleHooksTrust?: (hooks: ProjectHooks, trust: TrustStore) => Promise<string[]>;
  /** Resolve the package launchers of host hooks outside the workspace (`hostHooksOutsideWorkspace`): for a session that runs them. */
  resolveLaunchers?: boolean;
}): Promise<WorkspacePlugins> => {
  const { workspace } = options;
  const config = await loadWorkspaceConfig(workspace);
  const trust = options.trust ?? fileProjectTrust(options.env ? { env: options.env } : {});
  const discovered = await discoverPlugins({ workspace, configured: config?.plugins ?? [], cli: options.cli ?? [], ...(options.env ? { env: options.env } : {}) });
  const warnings = options.settleTrust ? await options.settleTrust(discovered, trust) : [];
  const plugins = await pluginSpecsOf(discovered, { workspace, ...(config?.pluginConfig ? { config: config.pluginConfig } : {}), trust });
  const idOf = (spec: PluginSpec): unknown => (spec.manifest as { id?: unknown } | undefined)?.id;
  const projectIds = new Set(plugins.filter((spec) => spec.source === 'project').map(idOf));
  for (const id of Object.keys(config?.pluginConfig ?? {})) {
    const other = plugins.find((spec) => idOf(spec) === id && spec.source !== 'project');
    if (other && !projectIds.has(id)) warnings.push(`${configFileName}: pluginConfig.${id} is ignored: ${id} is a ${other.source} plugin, not this workspace's, and a workspace file configures only its own project plugins`);
  }
  for (const spec of plugins) if (spec.source === 'project' && spec.trusted === false) warnings.push(`project plugin in ${spec.location} is ${spec.trustChanged ? 'untrusted (changed since you trusted it)' : 'not trusted'}: run \`rein plugins trust\` (or pass --yes) to enable it`);
  const hooksTrust = options.hooksTrust ?? new TrustStore(trustFilePath(options.env ?? process.env));
  let project = await loadProjectHooks(workspace, config?.hooks, hooksTrust);
  if (project && project.status !== 'trusted' && options.settleHooksTrust) {
    warnings.push(...(await options.settleHooksTrust(project, hooksTrust)));
    project = { ...project, status: await hooksTrust.status(project.subject) };
  }
  if (project && project.status !== 'trusted') warnings.push(untrustedHooksWarning(project));
  let hooks = project?.status === 'trusted' ? sandboxedByDefault(project.hooks) : undefined;
  if (hooks && options.resolveLaunchers) {
    const launched = await hostHooksOutsideWorkspace(hooks, workspace, options.env ? { env: options.env as NodeJS.ProcessEnv } : {});
    hooks = launched.hooks;
    warnings.push(...launched.warnings);
  }
  return { plugins, ...(hooks ? { hooks } : {}), ...(project && project.status !== 'trusted' ? { untrustedHooks: project } : {}), warnings };
};

/**
 * Fail closed when hooks the user trusted would be lost: the `hooks` section changed since it was trusted (any edit,
 * even one added hook, changes its digest) and nobody trusted it again (no TTY to ask, no `--yes`, or the prompt was
 * declined). A session that started anyway would run without the guards the user approved (a `PreToolUse` hook that
 * denies `rm`), so it does not start: `HOOK_UNTRUSTED` (exit 2) names the section and how to go on. Hooks that were
 * never trusted are only left out, with a warning, as before: no guard the user relied on is lost.
 */
export const refuseLostHooks = (loaded: object): void => {
  const project = 'untrustedHooks' in loaded ? (loaded.untrustedHooks as ProjectHooks | undefined) : undefined;
  if (project?.status !== 'changed') return;
  throw new PluginError('HOOK_UNTRUSTED', `${untrustedHooksWarning(project).replace(/ \(trust them with .*\)$/, '')}; the hooks you trusted before would not guard this session either, so it does not start: review the section and trust it as it is now (\`rein hooks trust\`, --yes, or the prompt on a terminal), or restore the section you trusted`);
};

/**
 * The folders of a workspace's project plugins — `.rein-plugins/<dir>`, a directory `plugins` names, and the package
 * directory of an npm package it names (`node_modules/<name>`): protected paths for a session, like `.rein-plugins/`.
 * Every file there is the plugin's code (its digest covers them all), so no tool may read or write them, the sandbox
 * hides them and a command that names them asks; a model that could rewrite one module would run its code in rein's
 * process at the next start.
 */
export const projectPluginFolders = (plugins: ReadonlyArray<PluginSpec | ReinPlugin>, workspace?: string): string[] =>
  plugins.flatMap((plugin) => {
    if (!('source' in plugin) || plugin.location === undefined || !isAbsolute(plugin.location)) return [];
    if (plugin.source === 'project') return [plugin.location];
    // A `--plugin` folder inside the workspace is the model's to rewrite as much as a project plugin is: the next
    // `rein resume … --plugin <dir>` (the line rein prints) would load its code into rein's process.
    return plugin.source === 'cli' && workspace !== undefined && isInsidePath(workspace, plugin.location) ? [plugin.location] : [];
  });

const isInsidePath = (root: string, candidate: string): boolean => {
  const relation = relative(root, candidate);
  return relation === '' || (!relation.startsWith('..') && !isAbsolute(relation));
};
