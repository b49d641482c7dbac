import type { Command } from 'commander';
import type { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createProviderFromSettings, type BuiltProvider } from '../providers/provider-factory.js';
import { loadWorkspaceConfig, resolveProviderSettings, type ProviderSettings } from '../providers/provider-settings.js';

/** The provider flags of `rein run` and `rein resume`. */
export interface ProviderFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  script?: string;
  from?: string;
  /** Repeated `--fallback` values; `false` with `--no-fallback`. */
  fallback?: string[] | false;
}

/** Add `--provider`, `--model`, `--base-url`, `--script` and `--from` to a command. */
export const addProviderOptions = (command: Command, scriptHelp: string): Command =>
  command
    .option('--provider <name>', 'openai (any OpenAI-compatible endpoint), anthropic, scripted or recorded (env REIN_PROVIDER)')
    .option('--model <id>', 'the model id (env REIN_MODEL)')
    .option('--base-url <url>', 'the endpoint: OpenAI style includes /v1 (http://127.0.0.1:11434/v1), Anthropic style does not (env REIN_BASE_URL)')
    .option('--script <file>', scriptHelp)
    .option('--from <sessionId>', 'recorded provider: replay this logged session\'s model outputs')
    .option('--fallback <provider:model[@url]>', 'fall back to this provider when the first cannot answer (rate limit, overloaded, server error, network, timeout, quota); repeat for a chain', (value: string, previous: string[] | false = []) => [...(previous || []), value])
    .option('--no-fallback', 'run without any fallback chain, whatever rein.config.json or the resumed session says');

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
