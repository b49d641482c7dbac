import { builtinTools } from '../../tools/builtin-tools.js';
import { CapabilityRegistry } from '../../plugins/capability-registry.js';
import { PluginHost, type PluginState } from '../../plugins/plugin-host.js';
import { PluginError, type PluginErrorCode } from '../../plugins/plugin-errors.js';
import { discoverPlugins } from '../../plugins/plugin-loader.js';
import { fileProjectTrust } from '../../plugins/project-trust.js';
import { HookKernel } from '../../hooks/hook-kernel.js';
import { commandHookRegistrations } from '../../hooks/command-hooks.js';
import { loadWorkspaceConfig } from '../../providers/provider-settings.js';
import { ReinError } from '../../host/host-errors.js';
import { printJson, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { CommonOptions, PluginOptions } from '../command-options.js';
import { pluginsFor } from '../plugin-options.js';
import { ExitCode } from '../exit-codes.js';

type ListOptions = CommonOptions & PluginOptions;

/** Load the workspace's plugins into a host of their own (no store, no session) — what `list` and plugin commands see. */
const loadAll = async (options: ListOptions) => {
  const workspace = await workspaceOf(options);
  const loaded = await pluginsFor(options, workspace);
  const registry = new CapabilityRegistry(new Set(builtinTools().map((tool) => tool.name)));
  const host = new PluginHost({ workspace, registry });
  for (const spec of loaded.plugins) await host.load(spec);
  const hooks = new HookKernel([...registry.hookRegistrations(), ...commandHookRegistrations(loaded.hooks, { workspace })]);
  // Listed, never run: the hooks of rein.config.json that are not loaded because they are not trusted (or changed).
  const untrusted = loaded.untrustedHooks ? commandHookRegistrations(loaded.untrustedHooks.hooks, { workspace }).map((hook) => ({ hook, state: loaded.untrustedHooks!.status === 'changed' ? 'untrusted (changed)' : 'untrusted' })) : [];
  return { workspace, host, registry, hooks, untrusted, warnings: loaded.warnings };
};

const describe = (plugin: PluginState): string => {
  const head = `${plugin.id}${plugin.manifest ? `@${plugin.manifest.version}` : ''}  ${plugin.state.padEnd(9)} ${plugin.source}${plugin.location ? `  ${plugin.location}` : ''}`;
  const lines = [head];
  if (plugin.error) lines.push(`    ${plugin.error.code} at ${plugin.error.phase}: ${plugin.error.message}`);
  if (plugin.contributions.length > 0) lines.push(`    contributes: ${plugin.contributions.join(', ')}`);
  if (plugin.revoked.length > 0) lines.push(`    revoked: ${plugin.revoked.join(', ')}`);
  return lines.join('\n');
};

/** The body of `rein plugins list`. */
export const listPluginsCommand = async (options: ListOptions): Promise<void> => {
  const { host, hooks, untrusted, warnings } = await loadAll(options);
  const states = host.plugins();
  const hookList = hooks.list().map(({ id, point, kind, order, timeoutMs, failOpen }) => ({ id, point, kind, order, timeoutMs, failOpen, state: 'loaded' }));
  const notLoaded = untrusted.map(({ hook: { id, point, kind, order, timeoutMs, failOpen }, state }) => ({ id, point, kind, order, timeoutMs, failOpen, state, error: { code: 'HOOK_UNTRUSTED' satisfies PluginErrorCode, message: `not loaded: the hooks of rein.config.json are ${state === 'untrusted' ? 'not trusted' : 'changed since they were trusted'} (run \`rein hooks trust\`)` } }));
  if (options.json) {
    for (const plugin of states) printJson({ type: 'plugin', id: plugin.id, state: plugin.state, source: plugin.source, ...(plugin.location ? { location: plugin.location } : {}), ...(plugin.manifest ? { version: plugin.manifest.version, name: plugin.manifest.name } : {}), contributions: plugin.contributions, ...(plugin.error ? { error: plugin.error } : {}) });
    for (const hook of [...hookList, ...notLoaded]) printJson({ type: 'hook', ...hook });
  } else {
    for (const warning of warnings) printText(`rein: ${warning}\n`, process.stderr);
    printText(states.length === 0 ? 'no plugins\n' : `${states.map(describe).join('\n')}\n`);
    if (hookList.length > 0) printText(`hooks, in the order they run:\n${hookList.map((hook) => `  ${hook.point.padEnd(20)} ${hook.id} (${hook.kind}, order ${hook.order}, timeout ${hook.timeoutMs} ms${hook.failOpen ? ', fail open' : ''})`).join('\n')}\n`);
    if (notLoaded.length > 0) printText(`hooks of rein.config.json not loaded, ${notLoaded[0]!.state} (trust them with \`rein hooks trust\`):\n${notLoaded.map((hook) => `  ${hook.point.padEnd(20)} ${hook.id} (${hook.kind}, ${hook.state})`).join('\n')}\n`);
  }
  await host.stopAll('listed');
};

/** The body of `rein plugins trust`. */
export const trustPluginsCommand = async (ids: string[], options: CommonOptions): Promise<void> => {
  const workspace = await workspaceOf(options);
  const config = await loadWorkspaceConfig(workspace);
  const trust = fileProjectTrust();
  const found = await discoverPlugins({ workspace, configured: config?.plugins ?? [] });
  // Every id named must be a project plugin here, or nothing is trusted: a typo is named, not passed over while the
  // other ids are trusted.
  const known = new Set(found.flatMap((entry) => (entry.source === 'project' && !('error' in entry) && typeof (entry.manifest as { id?: unknown }).id === 'string' ? [(entry.manifest as { id: string }).id] : [])));
  const unknown = [...new Set(ids.filter((id) => !known.has(id)))];
  if (unknown.length > 0 && known.size > 0) throw new ReinError('USAGE', `no project plugin named ${unknown.join(', ')} (the project plugins here: ${[...known].join(', ')}); nothing was trusted`);
  let trusted = 0;
  for (const entry of found) {
    if (entry.source !== 'project') continue;
    if ('error' in entry) {
      // A project plugin rein cannot read or digest whole is never trusted; say why rather than skip it silently.
      printText(`rein: cannot trust the project plugin at ${entry.location}: ${entry.error.code}: ${entry.error.message}\n`, process.stderr);
      continue;
    }
    const id = (entry.manifest as { id?: unknown }).id;
    if (typeof id !== 'string' || (ids.length > 0 && !ids.includes(id))) continue;
    await trust.trust({ workspace, pluginId: id, digest: entry.digest });
    printText(`trusted ${id} (${entry.digest}) in ${workspace}\n`);
    trusted++;
  }
  if (trusted === 0) throw new ReinError('USAGE', ids.length > 0 ? `no project plugin named ${ids.join(', ')}` : 'no project plugins to trust');
};

/**
 * Split a plugin command's arguments: rein's own `--plugin <dir>` / `--plugin=<dir>` (repeatable, as for `rein run`)
 * and `--workspace <dir>` load the plugins; everything else — and everything after `--` — is the command's.
 */
export const pluginCommandArguments = (args: readonly string[]): { options: ListOptions; args: string[] } => {
  const plugin: string[] = [];
  let workspace: string | undefined;
  const rest: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      rest.push(...args.slice(index + 1));
      break;
    }
    const flag = /^--(plugin|workspace)(?:=(.*))?$/.exec(arg);
    if (!flag) {
      rest.push(arg);
      continue;
    }
    const value = flag[2] ?? args[++index];
    if (value === undefined || value === '') throw new ReinError('USAGE', `option '--${flag[1]} <dir>' argument missing`);
    if (flag[1] === 'plugin') plugin.push(value);
    else workspace = value;
  }
  return { options: { ...(plugin.length > 0 ? { plugin } : {}), ...(workspace === undefined ? {} : { workspace }) }, args: rest };
};

/** The body of `rein <plugin> <command> [args…]`. */
export const pluginCommand = async (pluginId: string, name: string | undefined, commandArgs: string[], setExit: (code: number) => void): Promise<void> => {
  const { options, args } = pluginCommandArguments(commandArgs);
  const { workspace, registry, host } = await loadAll(options);
  const command = registry.commands().find((entry) => entry.pluginId === pluginId && entry.name === name);
  if (!command) {
    const known = registry.commands().map((entry) => `${entry.pluginId} ${entry.name}`);
    await host.stopAll('no such command');
    // A plugin of that name that did not load (untrusted, refused, failed) says why, with its own code — one message;
    // so does a `--plugin` directory that did not load (its id is not known then).
    const refused = host.plugins().find((plugin) => plugin.id === pluginId && plugin.error);
    if (refused?.error) throw new PluginError(refused.error.code, `plugin ${pluginId} is ${refused.state}, so its commands are unavailable: ${refused.error.message}`);
    const given = host.plugins().find((plugin) => plugin.source === 'cli' && plugin.error);
    if (given?.error) throw new PluginError(given.error.code, `the --plugin ${given.location ?? given.id} did not load (${given.error.phase}), so ${[pluginId, name].filter(Boolean).join(' ')} is unavailable: ${given.error.message}`);
    throw new ReinError('USAGE', `unknown command ${[pluginId, name].filter(Boolean).join(' ')}${known.length > 0 ? `; plugin commands: ${known.join(', ')}` : ''} (see rein --help)`);
  }
  try {
    const code = await command.command.run(args, { workspace, config: command.config, write: (text) => process.stdout.write(text) });
    setExit(typeof code === 'number' ? code : ExitCode.ok);
  } catch (error) {
    throw new PluginError('PLUGIN_SETUP_FAILED', `${pluginId} ${name} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    await host.stopAll('command finished');
  }
};
