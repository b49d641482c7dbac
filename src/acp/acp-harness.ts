import { createHash } from 'node:crypto';
import type { McpServer } from '@agentclientprotocol/sdk';
import type { Budgets } from '../../models/budgets.js';
import type { PermissionMode } from '../../models/permission.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { budgetsOf } from '../cli/budget-options.js';
import { cliCapabilitiesFor, type TrustQuestion } from '../cli/capability-options.js';
import { openStore, protectedPathsOf } from '../cli/cli-context.js';
import type { BudgetOptions, CapabilityFlags, PermissionOptions, PluginOptions, ProviderFlags } from '../cli/command-options.js';
import { hostRunFiles } from '../cli/host-run-files.js';
import { permissionsOf, sandboxOf } from '../cli/permission-options.js';
import { pluginProviderFor, pluginsFor, projectPluginFolders, refuseLostHooks } from '../cli/plugin-options.js';
import { buildProvider, providerSettingsFor } from '../cli/provider-options.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';
import { loadWorkspaceConfig } from '../providers/provider-settings.js';
import { createRein, type Rein } from '../rein.js';

/** The flags of `rein acp`: those of `rein run` that make sense for every session an editor starts. */
export interface AcpOptions extends ProviderFlags, PermissionOptions, BudgetOptions, PluginOptions, CapabilityFlags {
  store?: string;
  relaxed?: boolean;
  /** `--no-memory` sets it false. */
  memory?: boolean;
}

/**
 * The budgets of an editor's session unless flags say otherwise: a conversation lasts as long as the editor keeps it
 * (its wall time counts from its start, idle time included), so the limits are a week and many turns, not one task's.
 */
export const acpDefaultBudgets: Budgets = Object.freeze({ maxTurns: 1_000, maxToolCalls: 5_000, maxTokens: 50_000_000, maxWallTimeMs: 7 * 24 * 60 * 60 * 1000 });

/** One harness: a workspace, a permission mode and the editor's MCP servers, with the store it writes to. */
export interface AcpHarness {
  rein: Rein;
  store: EventStore;
  workspace: string;
  mode: PermissionMode;
  /** What loading it left out or changed (an untrusted file, a server the editor sent that rein cannot start). */
  warnings: string[];
}

/**
 * The editor's MCP servers as rein configures servers: the user's own configuration (like a host's), joining the
 * workspace's trusted ones (an editor server of the same name replaces the workspace's). `sse` is not offered (the
 * `initialize` answer says so); one sent anyway is skipped with a warning.
 */
export const editorServersOf = (servers: readonly McpServer[]): { servers: Record<string, McpServerConfig>; warnings: string[] } => {
  const result: Record<string, McpServerConfig> = {};
  const warnings: string[] = [];
  for (const server of servers) {
    if ('type' in server && server.type === 'http') result[server.name] = { type: 'http', url: server.url, headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])) };
    else if ('type' in server && server.type === 'sse') warnings.push(`the editor's MCP server ${server.name} uses SSE, which rein does not speak: it did not start`);
    else if ('command' in server) result[server.name] = { command: server.command, args: [...server.args], env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])) };
  }
  return { servers: result, warnings };
};

/**
 * The harnesses of one `rein acp` process: a store per workspace (opened once, kept open), and a `Rein` per workspace,
 * permission mode and set of editor MCP servers — composed as `rein run` composes one (provider settings, plugins,
 * command hooks, MCP servers, sandbox, protected paths), except that there is no terminal: trust for a workspace's
 * plugins, hooks and MCP servers is asked through the client (`ask`), or refused with a warning.
 */
export class AcpHarnesses {
  private readonly stores = new Map<string, Promise<EventStore>>();
  private readonly harnesses = new Map<string, Promise<AcpHarness>>();

  constructor(private readonly flags: AcpOptions) {}

  /** The store of a workspace (`--store`, else its configured or default location), opened once for writing. */
  storeFor(workspace: string): Promise<EventStore> {
    let store = this.stores.get(workspace);
    if (!store) {
      store = openStore({ ...(this.flags.store ? { store: this.flags.store } : {}), ...(this.flags.relaxed ? { relaxed: true } : {}) }, workspace, 'write');
      this.stores.set(workspace, store);
      store.catch(() => this.stores.delete(workspace));
    }
    return store;
  }

  /** The harness for a workspace, mode and editor servers; built (and its trust questions asked) the first time. */
  harnessFor(request: { workspace: string; mode: PermissionMode; servers: readonly McpServer[]; ask: TrustQuestion }): Promise<AcpHarness> {
    const key = `${request.workspace}\0${request.mode}\0${createHash('sha256').update(JSON.stringify(request.servers)).digest('hex')}`;
    let harness = this.harnesses.get(key);
    if (!harness) {
      harness = this.build(request);
      this.harnesses.set(key, harness);
      // A harness that could not be built (a usage error, a refused hooks section) is tried again next time.
      harness.catch(() => this.harnesses.delete(key));
    }
    return harness;
  }

  private async build(request: { workspace: string; mode: PermissionMode; servers: readonly McpServer[]; ask: TrustQuestion }): Promise<AcpHarness> {
    const { flags } = this;
    const { workspace, mode } = request;
    const budgets = { ...acpDefaultBudgets, ...budgetsOf(flags) };
    const permissions = { ...permissionsOf(flags), mode };
    const fromPlugin = flags.provider?.includes('__') ? flags.provider : undefined;
    const settings = fromPlugin ? undefined : await providerSettingsFor(flags, workspace);
    const loaded = await pluginsFor(flags, workspace, { trustProject: Boolean(flags.yes), ask: request.ask, launch: true });
    refuseLostHooks(loaded);
    const capabilities = await cliCapabilitiesFor(workspace, flags, { interactive: false, ask: request.ask });
    const editor = editorServersOf(request.servers);
    const mcpServers = { ...capabilities.mcpServers, ...editor.servers };
    const store = await this.storeFor(workspace);
    const { provider, fallbacks } = fromPlugin ? { provider: await pluginProviderFor(fromPlugin, flags, workspace, loaded.plugins), fallbacks: undefined } : await buildProvider(settings!, store);
    const protectedPaths = [...(await protectedPathsOf({ ...(flags.store ? { store: flags.store } : {}) }, workspace)), ...projectPluginFolders(loaded.plugins, workspace), ...(await hostRunFiles(workspace, loaded.hooks, mcpServers))];
    const rein = await createRein({
      store,
      workspace,
      provider,
      ...(fallbacks ? { fallbacks } : {}),
      budgets,
      ...(settings ? { modelOptions: settings.modelOptions } : {}),
      ...(settings?.applyPatch === undefined ? {} : { applyPatch: settings.applyPatch }),
      permissions,
      sandbox: sandboxOf(flags, (await loadWorkspaceConfig(workspace))?.sandbox),
      plugins: loaded.plugins,
      ...(loaded.hooks ? { hooks: loaded.hooks } : {}),
      mcpServers,
      capabilities: capabilities.capabilities,
      protectedPaths,
      ...(flags.memory === false ? { memory: false as const } : {}),
    });
    const problems = capabilities.problems.map((problem) => `${problem.source}: ${problem.reason}`);
    return { rein, store, workspace, mode, warnings: [...loaded.warnings, ...problems, ...editor.warnings] };
  }

  /** Interrupt every running session (each stays resumable), stop the plugins and close the stores. */
  async close(reason: string): Promise<void> {
    for (const harness of this.harnesses.values()) await harness.then((built) => built.rein.close(reason)).catch(() => undefined);
    for (const store of this.stores.values()) await store.then((opened) => opened.close()).catch(() => undefined);
  }
}
