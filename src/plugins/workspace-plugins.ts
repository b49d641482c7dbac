import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';
import type { PluginSpec } from './plugin-host.js';
import { discoverPlugins, pluginSpecsOf } from './plugin-loader.js';
import { fileProjectTrust, type ProjectTrust } from './project-trust.js';

/** What a session in a workspace runs with: its plugin specs, the command hooks of `rein.config.json`, and warnings. */
export interface WorkspacePlugins {
  plugins: PluginSpec[];
  hooks?: CommandHooksConfig;
  warnings: string[];
}

/**
 * The plugins and command hooks a session in `workspace` gets, as `rein run` loads them: user plugins (from the
 * config home `env` names), the project's (`.rein-plugins/`, `plugins` in `rein.config.json`; enabled only when
 * `trust` says the user trusted them), the `cli` directories (`--plugin`), each plugin's `pluginConfig`, and `hooks`.
 * `settleTrust` may record trust decisions for the discovered plugins before their specs are built (the CLI's `--yes`
 * and its prompt on a TTY) and returns warnings; without it trust is only read, and an untrusted project plugin stays
 * disabled, with a warning. Reading manifests runs no plugin code.
 */
export const workspacePlugins = async (options: {
  workspace: string;
  cli?: readonly string[];
  env?: Record<string, string | undefined>;
  trust?: ProjectTrust;
  settleTrust?: (discovered: Awaited<ReturnType<typeof discoverPlugins>>, trust: ProjectTrust) => Promise<string[]>;
}): Promise<WorkspacePlugins> => {
  const { workspace } = options;
  const config = await loadWorkspaceConfig(workspace);
  const trust = options.trust ?? fileProjectTrust(options.env ? { env: options.env } : {});
  const discovered = await discoverPlugins({ workspace, configured: config?.plugins ?? [], cli: options.cli ?? [], ...(options.env ? { env: options.env } : {}) });
  const warnings = options.settleTrust ? await options.settleTrust(discovered, trust) : [];
  const plugins = await pluginSpecsOf(discovered, { workspace, ...(config?.pluginConfig ? { config: config.pluginConfig } : {}), trust });
  for (const spec of plugins) if (spec.source === 'project' && spec.trusted === false) warnings.push(`project plugin in ${spec.location} is ${spec.trustChanged ? 'untrusted (changed since you trusted it)' : 'not trusted'}: run \`rein plugins trust\` (or pass --yes) to enable it`);
  return { plugins, ...(config?.hooks ? { hooks: config.hooks } : {}), warnings };
};
