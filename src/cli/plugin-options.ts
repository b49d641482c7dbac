import type { PluginOptions } from './command-options.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import { CapabilityRegistry } from '../plugins/capability-registry.js';
import { PluginHost, type PluginSpec } from '../plugins/plugin-host.js';
import type { ModelProvider } from '../providers/provider.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { ReinError } from '../host/host-errors.js';
import type { ProjectTrust } from '../plugins/project-trust.js';
import { workspacePlugins } from '../plugins/workspace-plugins.js';


/**
 * What the CLI loads for a workspace: the plugin specs (user, project, `--plugin`) with their config and trust, and
 * the command hooks of `rein.config.json` (see `workspacePlugins`). With `trustProject` (the `--yes` of `rein run`),
 * untrusted project plugins are trusted now, and that is recorded in the user's config home; otherwise they stay
 * disabled and say why.
 */
export const pluginsFor = async (options: PluginOptions, workspace: string, settings: { trustProject?: boolean; trust?: ProjectTrust } = {}): Promise<{ plugins: PluginSpec[]; hooks?: CommandHooksConfig; warnings: string[] }> =>
  workspacePlugins({ workspace, cli: options.plugin ?? [], ...(settings.trust ? { trust: settings.trust } : {}), ...(settings.trustProject ? { trustProject: true } : {}) });

/**
 * `--provider <plugin>__<id>`: a provider a plugin contributes. The plugins are loaded into a host of their own to
 * build it (the harness loads them again for the session); an unknown id is a usage error listing the plugin providers.
 */
export const pluginProviderFor = async (name: string, flags: { model?: string; baseUrl?: string }, workspace: string, plugins: readonly PluginSpec[]): Promise<ModelProvider> => {
  const registry = new CapabilityRegistry(new Set(builtinTools().map((tool) => tool.name)));
  const host = new PluginHost({ workspace, registry });
  for (const spec of plugins) await host.load(spec);
  const found = registry.provider(name);
  if (!found) throw new ReinError('USAGE', `no plugin provides ${name}${registry.providers().length > 0 ? `; plugin providers: ${registry.providers().map((provider) => provider.id).join(', ')}` : ' (no plugin contributes a provider)'}`);
  return found.create({ ...(flags.model ? { model: flags.model } : {}), ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}) });
};
