import { createRequire } from 'node:module';
import { reinConfigHome } from '../policy/protected-paths.js';
import { readdir } from 'node:fs/promises';
import { hostFileProblem, readHostFile } from '../util/read-regular-file.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginSource } from '../../models/plugin.records.js';
import { blake3Hex } from '../../stores/blob-hash.js';
import type { ReinPlugin } from './plugin-contract.js';
import { PluginError } from './plugin-errors.js';
import { digestPluginFolder } from './plugin-folder.js';
import type { PluginSpec } from './plugin-host.js';
import type { ProjectTrust } from './project-trust.js';

/** The file a plugin directory (or npm package) declares itself in: the manifest plus `main`, its module. */
export const pluginManifestFile = 'rein-plugin.json';

/** The project's own plugin directory: each subdirectory with a `rein-plugin.json` is a project plugin. */
export const projectPluginDirectory = '.rein-plugins';

/** rein's per-user config directory: `$REIN_CONFIG_HOME`, else `$XDG_CONFIG_HOME/rein`, else `~/.config/rein`. */
export const userConfigHome = (env: Record<string, string | undefined> = process.env): string => reinConfigHome(env);

/** A plugin found on disk: its directory, its manifest (not yet validated) and the digest of what would run. */
export interface DiscoveredPlugin {
  source: PluginSource;
  directory: string;
  manifest: unknown;
  main: string;
  /**
   * What a user trusts: for a project plugin the BLAKE3 of its manifest and every file of its folder (see
   * `digestPluginFolder`); for a user or `--plugin` plugin, which need no trust, of the manifest file and the main module.
   */
  digest: string;
  /** How many entries of the folder the digest covers (project plugins). */
  files?: number;
}

const readPluginDirectory = async (directory: string, source: PluginSource): Promise<DiscoveredPlugin> => {
  const file = join(directory, pluginManifestFile);
  const read = await readHostFile(file);
  if (!read.ok) {
    if (read.reason === 'missing' || read.reason === 'unreadable') throw new PluginError('PLUGIN_NOT_FOUND', `no ${pluginManifestFile} in ${directory}: ${read.detail}`);
    throw new PluginError('PLUGIN_MANIFEST_INVALID', hostFileProblem(file, read));
  }
  const text = read.bytes.toString('utf8');
  let declared: Record<string, unknown>;
  try {
    declared = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new PluginError('PLUGIN_MANIFEST_INVALID', `${file} is not valid JSON: ${(error as Error).message}`);
  }
  const { main = 'index.js', ...manifest } = declared;
  if (typeof main !== 'string' || isAbsolute(main) || main.split(/[\\/]/).includes('..')) throw new PluginError('PLUGIN_MANIFEST_INVALID', `${file}: main must be a relative path inside the plugin directory`);
  if (source === 'project') {
    const folder = await digestPluginFolder(directory, text);
    return { source, directory, manifest, main, digest: folder.digest, files: folder.files };
  }
  const mainFile = await readHostFile(join(directory, main));
  if (!mainFile.ok && mainFile.reason !== 'missing') throw new PluginError('PLUGIN_MANIFEST_INVALID', hostFileProblem(join(directory, main), mainFile));
  const code = mainFile.ok ? mainFile.bytes : Buffer.alloc(0);
  const digest = `b3:${await blake3Hex(Buffer.concat([Buffer.from(text), Buffer.from([0]), code]))}`;
  return { source, directory, manifest, main, digest };
};

const subdirectories = async (root: string): Promise<string[]> => {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => join(root, entry.name)).sort();
};

/** Where an npm package lives, resolved from the workspace (its own node_modules first). */
const packageDirectory = (name: string, workspace: string): string => {
  try {
    return dirname(createRequire(join(workspace, 'package.json')).resolve(`${name}/package.json`));
  } catch (error) {
    throw new PluginError('PLUGIN_NOT_FOUND', `plugin package ${name} is not installed in ${workspace}: ${(error as Error).message}`);
  }
};

/**
 * Find plugins: user plugins (`<config home>/plugins/*`), the project's (`.rein-plugins/*` and the `plugins` list of
 * `rein.config.json` — local paths or npm packages), and `--plugin <dir>` for one run. Reading a manifest runs no
 * plugin code. A source that cannot be read becomes a spec that fails at its manifest, so `rein plugins list` shows it.
 */
export const discoverPlugins = async (options: { workspace: string; configured?: readonly string[]; cli?: readonly string[]; env?: Record<string, string | undefined> }): Promise<Array<DiscoveredPlugin | { source: PluginSource; location: string; error: PluginError }>> => {
  const found: Array<DiscoveredPlugin | { source: PluginSource; location: string; error: PluginError }> = [];
  const add = async (directory: string, source: PluginSource) => {
    try {
      found.push(await readPluginDirectory(directory, source));
    } catch (error) {
      found.push({ source, location: directory, error: error instanceof PluginError ? error : new PluginError('PLUGIN_LOAD_FAILED', (error as Error).message) });
    }
  };
  for (const directory of await subdirectories(join(userConfigHome(options.env), 'plugins'))) await add(directory, 'user');
  for (const directory of await subdirectories(join(options.workspace, projectPluginDirectory))) await add(directory, 'project');
  for (const entry of options.configured ?? []) {
    if (entry.startsWith('.') || isAbsolute(entry)) await add(resolve(options.workspace, entry), 'project');
    else {
      try {
        await add(packageDirectory(entry, options.workspace), 'project');
      } catch (error) {
        found.push({ source: 'project', location: entry, error: error as PluginError });
      }
    }
  }
  for (const entry of options.cli ?? []) await add(resolve(entry), 'cli');
  return found;
};

/**
 * Turn discovered plugins into specs for the host: config, trust and a loader that imports `main` only when asked.
 * `config` (the workspace's `pluginConfig`) reaches project plugins only.
 */
export const pluginSpecsOf = async (discovered: Awaited<ReturnType<typeof discoverPlugins>>, options: { workspace: string; config?: Record<string, unknown>; trust: ProjectTrust }): Promise<PluginSpec[]> => {
  const specs: PluginSpec[] = [];
  for (const entry of discovered) {
    if ('error' in entry) {
      specs.push({ source: entry.source, location: entry.location, error: { code: entry.error.code, message: entry.error.message } });
      continue;
    }
    const id = (entry.manifest as { id?: unknown }).id;
    const subject = typeof id === 'string' ? { workspace: options.workspace, pluginId: id, digest: entry.digest } : undefined;
    const status = entry.source !== 'project' ? 'trusted' : subject === undefined ? 'untrusted' : options.trust.status ? await options.trust.status(subject) : (await options.trust.isTrusted(subject)) ? 'trusted' : 'untrusted';
    specs.push({
      source: entry.source,
      location: entry.directory,
      manifest: entry.manifest,
      trusted: status === 'trusted',
      ...(status === 'changed' ? { trustChanged: true } : {}),
      // The workspace file's `pluginConfig` comes with the repository: it configures only the repository's own
      // (project) plugins. A user or `--plugin` plugin is the user's, and runs in rein's process on the host: a
      // cloned file that configured it (a command it runs, a path it reads) would act with the user's rights.
      ...(entry.source === 'project' && typeof id === 'string' && options.config?.[id] !== undefined ? { config: options.config[id] } : {}),
      load: async () => {
        const module = (await import(pathToFileURL(join(entry.directory, entry.main)).href)) as { default?: ReinPlugin; plugin?: ReinPlugin };
        return (module.default ?? module.plugin) as ReinPlugin;
      },
    });
  }
  return specs;
};
