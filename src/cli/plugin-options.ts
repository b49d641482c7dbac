import type { PluginOptions } from './command-options.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import { CapabilityRegistry } from '../plugins/capability-registry.js';
import { PluginHost, type PluginSpec } from '../plugins/plugin-host.js';
import type { ModelProvider } from '../providers/provider.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { ReinError } from '../host/host-errors.js';
import { discoverPlugins, pluginSpecsOf } from '../plugins/plugin-loader.js';
import { fileProjectTrust, type ProjectTrust } from '../plugins/project-trust.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';


/**
 * What the CLI loads for a workspace: the plugin specs (user, project, `--plugin`) with their config and trust, and
 * the command hooks of `rein.config.json`. With `trustProject` (the `--yes` of `rein run`), untrusted project plugins
 * are trusted now, and that is recorded in the user's config home; otherwise they stay disabled and say why.
 */
export const pluginsFor = async (options: PluginOptions, workspace: string, settings: { trustProject?: boolean; trust?: ProjectTrust } = {}): Promise<{ plugins: PluginSpec[]; hooks?: CommandHooksConfig; warnings: string[] }> => {
  const config = await loadWorkspaceConfig(workspace);
  const trust = settings.trust ?? fileProjectTrust();
  const discovered = await discoverPlugins({ workspace, configured: config?.plugins ?? [], cli: options.plugin ?? [] });
  const warnings: string[] = [];
  if (settings.trustProject) {
    for (const entry of discovered) {
      if ('error' in entry || entry.source !== 'project') continue;
      const id = (entry.manifest as { id?: unknown }).id;
      if (typeof id !== 'string') continue;
      if (!(await trust.isTrusted({ workspace, pluginId: id, digest: entry.digest }))) {
        await trust.trust({ workspace, pluginId: id, digest: entry.digest });
        warnings.push(`trusted project plugin ${id} (${entry.digest.slice(0, 15)}…) because of --yes`);
      }
    }
  }
  const plugins = await pluginSpecsOf(discovered, { workspace, ...(config?.pluginConfig ? { config: config.pluginConfig } : {}), trust });
  for (const spec of plugins) if (spec.source === 'project' && spec.trusted === false) warnings.push(`project plugin in ${spec.location} is not trusted: run \`rein plugins trust\` (or pass --yes) to enable it`);
  return { plugins, ...(config?.hooks ? { hooks: config.hooks } : {}), warnings };
};

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
