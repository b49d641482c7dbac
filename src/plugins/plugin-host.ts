import { createActor, type SnapshotFrom } from 'xstate';
import type { PluginFailed, PluginLoaded, PluginPhase, PluginReady, PluginSource, PluginStopped } from '../../models/plugin.records.js';
import { pluginMachine } from '../../machines/plugin.machine.js';
import { digestOf } from '../../machines/typestate/digest.js';
import type { FactDraft } from '../../models/envelope.js';
import { CapabilityRegistry } from './capability-registry.js';
import { PluginManifest, type PluginContributions, type PluginLogger, type PluginPermission, type PluginSetupContext, type ReinPlugin } from './plugin-contract.js';
import { PluginError, type PluginErrorCode } from './plugin-errors.js';
import { satisfies } from './semver.js';

/** The version plugins' `requires.hostVersion` is checked against. */
export const hostVersion = '0.1.0';

/** How long `setup` and `stop` may take before the plugin fails (ms). */
export const pluginSetupTimeoutMs = 10_000;

/**
 * One plugin to load: the plugin itself (or a loader that imports it), where it came from, its static manifest
 * when it has one on disk (validated before any of its code runs), its config, and what policy and trust said.
 */
export interface PluginSpec {
  source: PluginSource;
  plugin?: ReinPlugin;
  /** Imports the plugin's module (file and npm plugins); called only after the manifest passed every check. */
  load?: () => Promise<ReinPlugin>;
  /** The manifest as read from disk (`rein-plugin.json`); checked before `load` runs. */
  manifest?: unknown;
  location?: string;
  config?: unknown;
  /** Whether this workspace enables it (default: the manifest's `defaultEnabled`, true when absent). */
  enabled?: boolean;
  /** For project plugins: whether the user trusted this exact manifest and code (see `ProjectTrust`). */
  trusted?: boolean;
  /** For an untrusted project plugin: the user trusted it once, and its manifest or code changed since (`untrusted (changed)`). */
  trustChanged?: boolean;
  /** The source could not even be read (no manifest file, bad JSON, a package that is not installed). */
  error?: { code: PluginErrorCode; message: string };
}

/** What the host knows about one plugin: its lifecycle state, manifest, source and why it failed. */
export interface PluginState {
  id: string;
  source: PluginSource;
  location?: string;
  state: 'discovered' | 'loaded' | 'configured' | 'started' | 'ready' | 'stopping' | 'stopped' | 'failed' | 'disabled';
  manifest?: PluginManifest;
  manifestDigest?: string;
  error?: { phase: PluginPhase | 'policy'; code: PluginErrorCode; message: string };
  contributions: string[];
  revoked: string[];
}

export interface PluginHostOptions {
  workspace: string;
  registry: CapabilityRegistry;
  /** Host-level policy: permissions no plugin may have (its plugin is `disabled`), and whether `test` plugins may load. */
  policy?: { deniedPermissions?: readonly PluginPermission[]; allowTestSource?: boolean };
  logger?: (pluginId: string, level: 'info' | 'warn' | 'error', message: string) => void;
  clock?: () => number;
  setupTimeoutMs?: number;
}

type PluginActor = ReturnType<typeof createActor<typeof pluginMachine>>;

const within = async <T>(work: () => T | Promise<T>, timeoutMs: number, what: string): Promise<T> => {
  let handle: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(work),
      new Promise<never>((_, reject) => {
        handle = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(handle);
  }
};

const stateOf = (snapshot: SnapshotFrom<typeof pluginMachine>): PluginState['state'] => snapshot.value as PluginState['state'];

/**
 * The plugin host: validates each plugin's manifest before any of its code runs, checks host version, policy and
 * trust, loads, configures and starts it with a restricted setup context, registers its contributions
 * transactionally and drives its lifecycle machine (`machines/plugin.machine.ts`). A plugin that fails in any
 * phase has every contribution revoked and never takes the host down. Every lifecycle step becomes a fact
 * (`plugin.loaded`, `plugin.ready`, `plugin.failed`, `plugin.stopped`) in `journal()`, which each session writes
 * into its own log.
 */
export class PluginHost {
  readonly registry: CapabilityRegistry;
  private readonly actors = new Map<string, { actor: PluginActor; state: PluginState; contributions?: PluginContributions }>();
  private readonly facts: FactDraft[] = [];
  private readonly clock: () => number;
  private anonymous = 0;

  constructor(private readonly options: PluginHostOptions) {
    this.registry = options.registry;
    this.clock = options.clock ?? Date.now;
  }

  /** The lifecycle facts so far, in order (each session records them). */
  journal(): readonly FactDraft[] {
    return this.facts;
  }

  /** Every plugin the host has seen, in load order. */
  plugins(): PluginState[] {
    return [...this.actors.values()].map(({ actor, state }) => ({ ...state, state: stateOf(actor.getSnapshot()), contributions: [...actor.getSnapshot().context.contributions], revoked: [...actor.getSnapshot().context.revoked] }));
  }

  private record(type: string, data: PluginLoaded | PluginReady | PluginFailed | PluginStopped): void {
    this.facts.push({ type, data: data as unknown as Record<string, unknown>, at: this.clock() });
  }

  /** Load one plugin through every phase. Never throws: a failure is recorded and leaves the plugin `failed` or `disabled`. */
  async load(spec: PluginSpec): Promise<PluginState> {
    if (spec.error) return this.refuseEarly(`unreadable#${++this.anonymous}`, spec, 'failed', 'manifest', spec.error.code, `${spec.location ?? 'a plugin'}: ${spec.error.message}`);
    const declared = spec.manifest ?? spec.plugin?.manifest;
    const parsed = PluginManifest.safeParse(declared);
    const rawId = typeof (declared as { id?: unknown } | undefined)?.id === 'string' ? (declared as { id: string }).id : undefined;
    const pluginId = parsed.success ? parsed.data.id : `${rawId ?? 'unnamed'}#${++this.anonymous}`;
    if (this.actors.has(pluginId)) {
      const duplicate = `${pluginId}#${++this.anonymous}`;
      return this.refuseEarly(duplicate, spec, 'failed', 'manifest', 'PLUGIN_CONFLICT', `a plugin with id ${pluginId} is already loaded (from ${this.actors.get(pluginId)!.state.location ?? this.actors.get(pluginId)!.state.source})`);
    }
    if (!parsed.success) {
      return this.refuseEarly(pluginId, spec, 'failed', 'manifest', 'PLUGIN_MANIFEST_INVALID', parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '));
    }
    const manifest = parsed.data;
    const manifestDigest = digestOf(manifest);
    const entry = this.track(pluginId, spec, { manifest, manifestDigest });
    const { actor } = entry;
    const refuse = (code: PluginErrorCode, message: string): PluginState => {
      actor.send({ type: 'plugin.refused', reason: message });
      entry.state.error = { phase: 'policy', code, message };
      this.record('plugin.failed', { pluginId, source: spec.source, phase: 'manifest', code, message, revoked: [] });
      return this.stateFor(pluginId);
    };
    const fail = (phase: PluginPhase, code: PluginErrorCode, message: string): PluginState => {
      const registered = actor.getSnapshot().context.contributions.length > 0 || this.registry.has(pluginId);
      const revoked = registered ? this.registry.revoke(pluginId) : [];
      actor.send({ type: 'plugin.failed', phase, message });
      entry.state.error = { phase, code, message };
      this.record('plugin.failed', { pluginId, source: spec.source, phase, code, message, revoked });
      this.options.logger?.(pluginId, 'error', `${phase}: ${message}`);
      return this.stateFor(pluginId);
    };

    if (spec.source === 'test' && !this.options.policy?.allowTestSource) return refuse('PLUGIN_SOURCE_REFUSED', 'test plugins load only in the test runtime');
    const hostRange = manifest.requires?.hostVersion;
    if (hostRange && !satisfies(hostVersion, hostRange)) {
      actor.send({ type: 'plugin.failed', phase: 'manifest', message: `needs host ${hostRange}` });
      entry.state.error = { phase: 'manifest', code: 'PLUGIN_HOST_VERSION', message: `requires host version ${hostRange}; this is ${hostVersion}` };
      this.record('plugin.failed', { pluginId, source: spec.source, phase: 'manifest', code: 'PLUGIN_HOST_VERSION', message: entry.state.error.message, revoked: [] });
      return this.stateFor(pluginId);
    }
    const denied = (manifest.permissions ?? []).filter((permission) => this.options.policy?.deniedPermissions?.includes(permission));
    if (denied.length > 0) return refuse('PLUGIN_PERMISSION_DENIED', `asks for ${denied.join(', ')}, which policy does not allow`);
    if (!(spec.enabled ?? manifest.defaultEnabled ?? true)) {
      actor.send({ type: 'plugin.refused', reason: 'not enabled' });
      entry.state.error = { phase: 'policy', code: 'PLUGIN_SOURCE_REFUSED', message: 'not enabled (defaultEnabled is false and the workspace does not enable it)' };
      return this.stateFor(pluginId);
    }
    if (spec.source === 'project' && !spec.trusted) {
      return refuse('PLUGIN_UNTRUSTED', spec.trustChanged ? 'untrusted (changed): its manifest or code changed since you trusted it, and a project plugin runs only as you trusted it (`rein plugins trust`, or `rein run --yes`)' : 'a project plugin runs only after you trust it (`rein plugins trust`, or `rein run --yes`)');
    }

    let plugin: ReinPlugin;
    try {
      plugin = spec.plugin ?? (await spec.load!());
    } catch (error) {
      return fail('load', 'PLUGIN_LOAD_FAILED', (error as Error).message ?? String(error));
    }
    if (typeof plugin?.setup !== 'function') return fail('load', 'PLUGIN_LOAD_FAILED', 'the module does not export a plugin (definePlugin({ manifest, setup }) as its default export)');
    if (spec.manifest !== undefined && (plugin.manifest?.id !== manifest.id || plugin.manifest?.version !== manifest.version)) {
      return fail('load', 'PLUGIN_MANIFEST_INVALID', `the module's manifest (${String(plugin.manifest?.id)}@${String(plugin.manifest?.version)}) is not the one on disk (${manifest.id}@${manifest.version})`);
    }
    actor.send({ type: 'plugin.loaded' });
    this.record('plugin.loaded', { pluginId, name: manifest.name, version: manifest.version, source: spec.source, ...(spec.location ? { location: spec.location } : {}), manifestDigest, permissions: [...(manifest.permissions ?? [])] });

    let config = spec.config;
    if (plugin.config) {
      const checked = plugin.config.safeParse(spec.config ?? {});
      if (!checked.success) return fail('configure', 'PLUGIN_CONFIG_INVALID', checked.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '));
      config = checked.data;
    }
    actor.send({ type: 'plugin.configured' });

    let contributions: PluginContributions;
    try {
      contributions = await within(() => plugin.setup(this.setupContext(pluginId, config)), this.options.setupTimeoutMs ?? pluginSetupTimeoutMs, 'setup');
      if (typeof contributions !== 'object' || contributions === null) throw new Error('setup must return an object of contributions');
    } catch (error) {
      return fail('start', 'PLUGIN_SETUP_FAILED', (error as Error).message ?? String(error));
    }
    entry.contributions = contributions;
    actor.send({ type: 'plugin.started' });

    let ids: string[];
    try {
      ids = this.registry.register({ manifest, source: spec.source, contributions, config, workspace: this.options.workspace });
    } catch (error) {
      const code = error instanceof PluginError ? error.code : 'PLUGIN_CONTRIBUTION_INVALID';
      await this.release(entry.contributions);
      return fail('register', code, (error as Error).message);
    }
    actor.send({ type: 'plugin.registered', contributions: ids });
    this.record('plugin.ready', { pluginId, ...this.registry.contributionsOf(pluginId) });
    return this.stateFor(pluginId);
  }

  /** Fail a plugin that is running (e.g. a host decides it misbehaves): revoke everything it contributed. */
  failPlugin(pluginId: string, phase: PluginPhase, code: PluginErrorCode, message: string): void {
    const entry = this.actors.get(pluginId);
    if (!entry || entry.actor.getSnapshot().status === 'done') return;
    const revoked = this.registry.revoke(pluginId);
    entry.actor.send({ type: 'plugin.failed', phase, message });
    entry.state.error = { phase, code, message };
    this.record('plugin.failed', { pluginId, source: entry.state.source, phase, code, message, revoked });
  }

  /** Stop every ready plugin (in reverse load order): call its `stop`, revoke its contributions, record it. */
  async stopAll(reason: string): Promise<void> {
    for (const [pluginId, entry] of [...this.actors.entries()].reverse()) {
      if (!entry.actor.getSnapshot().matches('ready')) continue;
      entry.actor.send({ type: 'plugin.stop' });
      try {
        await this.release(entry.contributions, true);
      } catch (error) {
        const revoked = this.registry.revoke(pluginId);
        entry.actor.send({ type: 'plugin.failed', phase: 'stop', message: (error as Error).message });
        entry.state.error = { phase: 'stop', code: 'PLUGIN_STOP_FAILED', message: (error as Error).message };
        this.record('plugin.failed', { pluginId, source: entry.state.source, phase: 'stop', code: 'PLUGIN_STOP_FAILED', message: (error as Error).message, revoked });
        continue;
      }
      this.registry.revoke(pluginId);
      entry.actor.send({ type: 'plugin.stopped' });
      this.record('plugin.stopped', { pluginId, reason });
    }
  }

  private async release(contributions: PluginContributions | undefined, rethrow = false): Promise<void> {
    if (!contributions?.stop) return;
    try {
      await within(() => contributions.stop!(), this.options.setupTimeoutMs ?? pluginSetupTimeoutMs, 'stop');
    } catch (error) {
      if (rethrow) throw error;
    }
  }

  private track(pluginId: string, spec: PluginSpec, extra: Partial<PluginState>) {
    const actor = createActor(pluginMachine, { input: { pluginId } });
    actor.start();
    const entry = { actor, state: { id: pluginId, source: spec.source, ...(spec.location ? { location: spec.location } : {}), state: 'discovered' as const, contributions: [], revoked: [], ...extra } as PluginState, contributions: undefined as PluginContributions | undefined };
    this.actors.set(pluginId, entry);
    return entry;
  }

  private refuseEarly(pluginId: string, spec: PluginSpec, _state: 'failed', phase: PluginPhase, code: PluginErrorCode, message: string): PluginState {
    const entry = this.track(pluginId, spec, {});
    entry.actor.send({ type: 'plugin.failed', phase, message });
    entry.state.error = { phase, code, message };
    this.record('plugin.failed', { pluginId, source: spec.source, phase, code, message, revoked: [] });
    return this.stateFor(pluginId);
  }

  private stateFor(pluginId: string): PluginState {
    return this.plugins().find((plugin) => plugin.id === pluginId)!;
  }

  /** The restricted context: a logger, the plugin's own config, workspace info and typing helpers — nothing else. */
  private setupContext(pluginId: string, config: unknown): PluginSetupContext {
    const log = (level: 'info' | 'warn' | 'error') => (message: string) => this.options.logger?.(pluginId, level, String(message));
    const logger: PluginLogger = Object.freeze({ info: log('info'), warn: log('warn'), error: log('error') });
    const identity = <T>(value: T): T => value;
    return Object.freeze({
      pluginId,
      logger,
      config,
      workspace: Object.freeze({ root: this.options.workspace }),
      host: Object.freeze({ version: hostVersion }),
      define: Object.freeze({ tool: identity, hook: identity, guardrail: identity, provider: identity, command: identity }),
    }) as PluginSetupContext;
  }
}
