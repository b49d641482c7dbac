import type { PluginOptions } from './command-options.js';
import { CapabilityRegistry } from '../plugins/capability-registry.js';
import { PluginHost, type PluginSpec } from '../plugins/plugin-host.js';
import type { ModelProvider } from '../providers/provider.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { ReinError } from '../host/host-errors.js';
import type { DiscoveredPlugin } from '../plugins/plugin-loader.js';
import { workspacePlugins, type WorkspacePlugins } from '../plugins/workspace-plugins.js';
export { projectPluginFolders, refuseLostHooks } from '../plugins/workspace-plugins.js';
import { describeProjectHooks } from '../hooks/project-hooks.js';
import { promptForTrust } from '../trust/trust-prompt.js';
import type { TrustStatus } from '../trust/trust-store.js';
import { relative } from 'node:path';
import type { ProjectTrust } from '../plugins/project-trust.js';


/**
 * What the CLI loads for a workspace: the plugin specs (user, project, `--plugin`) with their config and trust, and
 * the command hooks of `rein.config.json`. A project plugin or a `hooks` section not yet trusted (or changed since)
 * is trusted by `trustProject` (the `--yes` of `rein run`), or — with `interactive` (a TTY) — by answering the same
 * prompt an MCP project file gets; either is recorded in the trust store with its digest. Otherwise the plugin stays
 * disabled, the hooks are not loaded, and a warning says why.
 */
export const pluginsFor = async (options: PluginOptions, workspace: string, settings: { trustProject?: boolean; interactive?: boolean; trust?: ProjectTrust; ask?: (description: string, question: string) => Promise<boolean>; launch?: boolean } = {}): Promise<WorkspacePlugins> =>
  workspacePlugins({
    workspace,
    cli: options.plugin ?? [],
    ...(settings.launch ? { resolveLaunchers: true } : {}),
    ...(settings.trust ? { trust: settings.trust } : {}),
    ...(settings.trustProject || settings.interactive || settings.ask
      ? {
          settleTrust: async (discovered, trust) => {
            const warnings: string[] = [];
            for (const entry of discovered) {
              if ('error' in entry || entry.source !== 'project') continue;
              const id = (entry.manifest as { id?: unknown }).id;
              if (typeof id !== 'string') continue;
              const subject = { workspace, pluginId: id, digest: entry.digest };
              const status = trust.status ? await trust.status(subject) : (await trust.isTrusted(subject)) ? 'trusted' : 'untrusted';
              if (status === 'trusted') continue;
              if (settings.trustProject) {
                await trust.trust(subject);
                warnings.push(`trusted project plugin ${id} (${entry.digest.slice(0, 15)}…) because of --yes`);
              } else if (settings.ask ? await settings.ask(describeProjectPlugin(entry, workspace, status), 'trust this plugin as it is now?') : await promptForTrust(describeProjectPlugin(entry, workspace, status), { input: process.stdin, output: process.stderr }, 'trust this plugin as it is now?')) {
                await trust.trust(subject);
              }
            }
            return warnings;
          },
          settleHooksTrust: async (project, trust) => {
            if (settings.trustProject) {
              await trust.trust(project.subject);
              return [`trusted the command hooks of ${project.file} (${project.subject.digest.slice(0, 19)}…) because of --yes`];
            }
            if (settings.ask ? await settings.ask(describeProjectHooks(project), 'trust these hooks as they are now?') : await promptForTrust(describeProjectHooks(project), { input: process.stdin, output: process.stderr }, 'trust these hooks as they are now?')) await trust.trust(project.subject);
            return [];
          },
        }
      : {}),
  });

/** How a project plugin is described when the user is asked to trust it: what would load, with which rights. */
export const describeProjectPlugin = (entry: DiscoveredPlugin, workspace: string, status: TrustStatus): string => {
  const manifest = entry.manifest as { id?: unknown; version?: unknown; permissions?: unknown; contributes?: Record<string, unknown> };
  const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
  const contributes = Object.entries(manifest.contributes ?? {}).map(([kind, names]) => `${kind} ${list(names).join(', ')}`).filter((text) => !text.endsWith(' '));
  const where = relative(workspace, entry.directory) || entry.directory;
  const change = status === 'changed' ? ' It changed since you trusted it.' : '';
  return `project plugin ${String(manifest.id)}${typeof manifest.version === 'string' ? ` ${manifest.version}` : ''} in ${where} asks rein to load ${entry.main} into its own process, with your permissions.${change}\n  permissions: ${list(manifest.permissions).join(', ') || 'none'}${contributes.length > 0 ? `\n  contributes: ${contributes.join('; ')}` : ''}\n  digest: ${entry.digest}${entry.files === undefined ? '' : ` (every file of ${where}: ${entry.files} entries)`}`;
};

/**
 * `--provider <plugin>__<id>`: a provider a plugin contributes. The plugins are loaded into a host of their own to
 * build it (the harness loads them again for the session); an unknown id is a usage error listing the plugin providers.
 */
/**
 * The provider names (`<plugin>__<id>`) the enabled plugins' manifests contribute, read from the manifests only (no
 * plugin code runs): what `--provider` also accepts, for a usage error to name.
 */
export const pluginProviderNames = (plugins: readonly PluginSpec[]): string[] =>
  plugins.flatMap((spec) => {
    const manifest = spec.manifest as { id?: unknown; contributes?: { providers?: unknown } } | undefined;
    if (spec.enabled === false || spec.trusted === false || typeof manifest?.id !== 'string' || !Array.isArray(manifest.contributes?.providers)) return [];
    return manifest.contributes.providers.filter((id): id is string => typeof id === 'string').map((id) => `${manifest.id as string}__${id}`);
  });

export const pluginProviderFor = async (name: string, flags: { model?: string; baseUrl?: string }, workspace: string, plugins: readonly PluginSpec[]): Promise<ModelProvider> => {
  const registry = new CapabilityRegistry(new Set(builtinTools().map((tool) => tool.name)));
  const host = new PluginHost({ workspace, registry });
  for (const spec of plugins) await host.load(spec);
  const found = registry.provider(name);
  if (!found) throw new ReinError('USAGE', `no plugin provides ${name}${registry.providers().length > 0 ? `; plugin providers: ${registry.providers().map((provider) => provider.id).join(', ')}` : ' (no plugin contributes a provider)'}`);
  return found.create({ ...(flags.model ? { model: flags.model } : {}), ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}) });
};
