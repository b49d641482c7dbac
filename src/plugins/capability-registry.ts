import * as z from 'zod';
import type { PluginSource } from '../../models/plugin.records.js';
import type { ToolRisk } from '../tools/tool.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { HookRegistration } from '../hooks/hook-types.js';
import { defaultHookTimeoutMs } from '../hooks/hook-kernel.js';
import type { ModelProvider } from '../providers/provider.js';
import { PluginError } from './plugin-errors.js';
import { vendorToolNamePattern, type PluginCommand, type PluginContributions, type PluginManifest, type PluginProvider, type PluginTool } from './plugin-contract.js';
import { pluginToolDefinition } from './plugin-tool.js';

/** Separates a plugin's id from its contribution's name in a full id (`<plugin>__<name>`). */
export const namespaceSeparator = '__';

/** A registered tool as the registry describes it: the full id, where it came from, and what it may do. */
export interface ToolDescriptor {
  id: string;
  displayName: string;
  pluginId: string;
  source: PluginSource;
  pluginVersion: string;
  risk: ToolRisk;
  readOnly: boolean;
  state: 'ready';
}

/** A registered provider: `--provider <id>` picks it. */
export interface ProviderDescriptor {
  id: string;
  displayName: string;
  pluginId: string;
  create(settings: { model?: string; baseUrl?: string; apiKey?: string }): ModelProvider;
}

/** A registered command: `rein <plugin> <name>`. */
export interface CommandDescriptor {
  pluginId: string;
  name: string;
  description: string;
  command: PluginCommand;
  config: unknown;
}

interface Entry {
  pluginId: string;
  source: PluginSource;
  manifest: PluginManifest;
  tools: Map<string, { definition: AnyToolDefinition; descriptor: ToolDescriptor }>;
  providers: Map<string, ProviderDescriptor>;
  hooks: HookRegistration[];
  commands: Map<string, CommandDescriptor>;
}

const permissionOf: Record<PluginTool['risk'], string> = { read: 'read', write: 'write', execute: 'execute', network: 'network' };

const matcherOf = (matcher: string | undefined): ((tool: string) => boolean) | undefined => {
  if (matcher === undefined || matcher === '' || matcher === '*') return undefined;
  const pattern = new RegExp(`^(?:${matcher})$`);
  return (tool) => pattern.test(tool);
};

/**
 * What plugins contribute, normalised into uniform capability objects with their provenance (plugin id, source,
 * version). Registration is transactional: every contribution of a plugin is checked (names, schemas, declared
 * permissions, conflicts with what is already registered — the core's tools included) before any is added, so a
 * plugin is either fully registered or not at all. `revoke` removes everything of one plugin.
 */
export class CapabilityRegistry {
  private readonly entries = new Map<string, Entry>();

  /** @param reserved names no plugin tool may take (the built-in tools, tools the host passed). */
  constructor(private readonly reserved: ReadonlySet<string> = new Set()) {}

  /**
   * Register one plugin's contributions; resolves the full ids added, or throws `PLUGIN_CONTRIBUTION_INVALID` /
   * `PLUGIN_CONFLICT` with nothing registered.
   */
  register(options: { manifest: PluginManifest; source: PluginSource; contributions: PluginContributions; config: unknown; workspace: string }): string[] {
    const { manifest, source, contributions } = options;
    const pluginId = manifest.id;
    if (this.entries.has(pluginId)) throw new PluginError('PLUGIN_CONFLICT', `plugin ${pluginId} is already registered`);
    const permissions = new Set(manifest.permissions ?? []);
    const entry: Entry = { pluginId, source, manifest, tools: new Map(), providers: new Map(), hooks: [], commands: new Map() };
    const invalid = (message: string) => new PluginError('PLUGIN_CONTRIBUTION_INVALID', `plugin ${pluginId}: ${message}`);
    const taken = new Set([...this.reserved, ...this.toolNames()]);
    const declared = (kind: 'tools' | 'providers' | 'commands', name: string) => {
      if (!(manifest.contributes?.[kind] ?? []).includes(name)) throw invalid(`${kind.slice(0, -1)} ${name} is not declared in manifest.contributes.${kind}`);
    };

    for (const tool of contributions.tools ?? []) {
      if (typeof tool?.name !== 'string' || typeof tool.execute !== 'function') throw invalid('a tool needs a name and an execute function');
      declared('tools', tool.name);
      const id = `${pluginId}${namespaceSeparator}${tool.name}`;
      if (!vendorToolNamePattern.test(id)) throw invalid(`tool name ${id} does not match ${vendorToolNamePattern} (the vendors refuse it)`);
      if (!permissionOf[tool.risk]) throw invalid(`tool ${id} has no valid risk (read, write, execute or network)`);
      if (!permissions.has(permissionOf[tool.risk] as never)) throw invalid(`tool ${id} has risk ${tool.risk}, which the manifest's permissions do not declare`);
      if (taken.has(id) || entry.tools.has(id)) throw new PluginError('PLUGIN_CONFLICT', `plugin ${pluginId}: tool ${id} is already registered`);
      let definition: AnyToolDefinition;
      try {
        definition = pluginToolDefinition({ id, pluginId, version: manifest.version, tool, active: () => this.entries.get(pluginId) === entry });
      } catch (error) {
        throw invalid(`tool ${id} has an invalid parameter schema: ${(error as Error).message}`);
      }
      entry.tools.set(id, { definition, descriptor: { id, displayName: tool.name, pluginId, source, pluginVersion: manifest.version, risk: tool.risk, readOnly: definition.annotations.readOnly, state: 'ready' } });
    }

    for (const provider of contributions.providers ?? []) {
      if (typeof provider?.id !== 'string' || typeof provider.create !== 'function') throw invalid('a provider needs an id and a create function');
      declared('providers', provider.id);
      if (!permissions.has('model')) throw invalid(`provider ${provider.id} needs the model permission in the manifest`);
      const id = `${pluginId}${namespaceSeparator}${provider.id}`;
      if (!vendorToolNamePattern.test(id)) throw invalid(`provider id ${id} must match ${vendorToolNamePattern}`);
      if (entry.providers.has(id)) throw new PluginError('PLUGIN_CONFLICT', `plugin ${pluginId}: provider ${id} is registered twice`);
      entry.providers.set(id, { id, displayName: provider.displayName ?? provider.id, pluginId, create: (settings) => (provider as PluginProvider).create(settings) });
    }

    const hookIds = new Set<string>();
    const addHook = (id: unknown, point: HookRegistration['point'], fields: { order?: number; timeoutMs?: number; failOpen?: boolean; matcher?: string }, invoke: HookRegistration['invoke']) => {
      if (typeof id !== 'string' || !/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/.test(id)) throw invalid(`hook id ${String(id)} must be 1-64 letters, digits, _ . or -`);
      const full = `${pluginId}:${id}`;
      if (hookIds.has(full)) throw new PluginError('PLUGIN_CONFLICT', `plugin ${pluginId}: hook ${full} is registered twice`);
      hookIds.add(full);
      if (fields.timeoutMs !== undefined && !(Number.isFinite(fields.timeoutMs) && fields.timeoutMs > 0 && fields.timeoutMs <= 600_000)) throw invalid(`hook ${full}: timeoutMs must be between 1 and 600000`);
      if (fields.order !== undefined && !Number.isFinite(fields.order)) throw invalid(`hook ${full}: order must be a finite number`);
      let matches: ((tool: string) => boolean) | undefined;
      try {
        matches = matcherOf(fields.matcher);
      } catch (error) {
        throw invalid(`hook ${full}: matcher is not a regular expression: ${(error as Error).message}`);
      }
      entry.hooks.push({ id: full, kind: 'plugin', pluginId, point, order: fields.order ?? 0, timeoutMs: fields.timeoutMs ?? defaultHookTimeoutMs, failOpen: fields.failOpen ?? false, ...(matches ? { matches } : {}), invoke });
    };
    const declaredPoints = new Set(manifest.contributes?.hooks ?? []);
    for (const hook of contributions.hooks ?? []) {
      if (typeof hook?.run !== 'function') throw invalid(`hook ${String(hook?.id)} needs a run function`);
      if (!declaredPoints.has(hook.point)) throw invalid(`hook ${hook.id} runs at ${String(hook.point)}, which manifest.contributes.hooks does not declare`);
      addHook(hook.id, hook.point, hook, (input, context) => {
        const answer = hook.run(input as never, context);
        return answer instanceof Promise ? answer.then((result) => ({ ok: true as const, result: result ?? undefined })) : { ok: true, result: answer ?? undefined };
      });
    }
    const declaredStages = new Set(manifest.contributes?.guardrails ?? []);
    for (const guardrail of contributions.guardrails ?? []) {
      if (typeof guardrail?.check !== 'function') throw invalid(`guardrail ${String(guardrail?.id)} needs a check function`);
      if (!declaredStages.has(guardrail.stage)) throw invalid(`guardrail ${guardrail.id} runs at stage ${String(guardrail.stage)}, which manifest.contributes.guardrails does not declare`);
      addHook(guardrail.id, `guardrail.${guardrail.stage}`, guardrail, (input, context) => {
        const answer = guardrail.check(input as never, context);
        return answer instanceof Promise ? answer.then((result) => ({ ok: true as const, result })) : { ok: true, result: answer };
      });
    }

    for (const command of contributions.commands ?? []) {
      if (typeof command?.name !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(command.name) || typeof command.run !== 'function') throw invalid('a command needs a lower-case name and a run function');
      declared('commands', command.name);
      if (entry.commands.has(command.name)) throw new PluginError('PLUGIN_CONFLICT', `plugin ${pluginId}: command ${command.name} is registered twice`);
      entry.commands.set(command.name, { pluginId, name: command.name, description: command.description ?? '', command, config: options.config });
    }

    this.entries.set(pluginId, entry);
    return this.idsOf(entry);
  }

  /** Remove every contribution of a plugin; returns the full ids removed. */
  revoke(pluginId: string): string[] {
    const entry = this.entries.get(pluginId);
    if (!entry) return [];
    this.entries.delete(pluginId);
    return this.idsOf(entry);
  }

  private idsOf(entry: Entry): string[] {
    return [...entry.tools.keys(), ...entry.providers.keys(), ...entry.hooks.map((hook) => hook.id), ...[...entry.commands.keys()].map((name) => `${entry.pluginId} ${name}`)];
  }

  /** The ids registered for one plugin, split by kind (what `plugin.ready` records). */
  contributionsOf(pluginId: string): { tools: string[]; providers: string[]; hooks: string[]; guardrails: string[]; commands: string[] } {
    const entry = this.entries.get(pluginId);
    if (!entry) return { tools: [], providers: [], hooks: [], guardrails: [], commands: [] };
    return {
      tools: [...entry.tools.keys()],
      providers: [...entry.providers.keys()],
      hooks: entry.hooks.filter((hook) => !hook.point.startsWith('guardrail.')).map((hook) => hook.id),
      guardrails: entry.hooks.filter((hook) => hook.point.startsWith('guardrail.')).map((hook) => hook.id),
      commands: [...entry.commands.keys()],
    };
  }

  toolNames(): string[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.tools.keys()]);
  }

  /** The tool definitions, in plugin registration order (what the tool registry registers). */
  toolDefinitions(): AnyToolDefinition[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.tools.values()].map((tool) => tool.definition));
  }

  describeTools(): ToolDescriptor[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.tools.values()].map((tool) => tool.descriptor));
  }

  providers(): ProviderDescriptor[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.providers.values()]);
  }

  provider(id: string): ProviderDescriptor | undefined {
    return this.providers().find((provider) => provider.id === id);
  }

  hookRegistrations(): HookRegistration[] {
    return [...this.entries.values()].flatMap((entry) => entry.hooks);
  }

  commands(): CommandDescriptor[] {
    return [...this.entries.values()].flatMap((entry) => [...entry.commands.values()]);
  }

  has(pluginId: string): boolean {
    return this.entries.has(pluginId);
  }
}

/** Whether a value is a zod schema (as opposed to a JSON Schema object). */
export const isZodSchema = (value: unknown): value is z.ZodType => value instanceof z.ZodType;
