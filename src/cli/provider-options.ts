import type { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createProviderFromSettings, type BuiltProvider } from '../providers/provider-factory.js';
import { loadWorkspaceConfig, resolveProviderSettings, type ProviderSettings } from '../providers/provider-settings.js';
import type { ProviderFlags } from './command-options.js';

export type { ProviderFlags } from './command-options.js';

const flagsOf = (flags: ProviderFlags) => ({ provider: flags.provider, model: flags.model, baseUrl: flags.baseUrl, script: flags.script, from: flags.from });

/**
 * Resolve the provider settings for a command (flags > the session's own provider on resume > environment >
 * `rein.config.json` > defaults). Pure apart from reading the config file, so usage errors come before any store
 * is opened.
 */
export const providerSettingsFor = async (flags: ProviderFlags, workspace: string, session?: SessionCreated['provider']): Promise<ProviderSettings> =>
  resolveProviderSettings({ flags: flagsOf(flags), ...(flags.fallback === false ? { noFallbacks: true } : flags.fallback ? { fallbackFlags: flags.fallback } : {}), ...(session ? { session } : {}), env: process.env, file: await loadWorkspaceConfig(workspace), workspace, cwd: process.cwd() });

/** Build the resolved provider; the recorded provider reads its source session from `store`. */
export const buildProvider = (settings: ProviderSettings, store: EventStore): Promise<BuiltProvider> => createProviderFromSettings(settings, { store });
