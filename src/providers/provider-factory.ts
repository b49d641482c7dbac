import type { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { createAnthropicProvider } from './anthropic.provider.js';
import { createOpenAICompatibleProvider } from './openai-compatible.provider.js';
import type { ModelProvider } from './provider.js';
import type { ProviderSettings } from './provider-settings.js';
import { loadRecordedProvider } from './recorded.provider.js';
import { createScriptedProvider, loadScript } from './scripted-provider.js';

/** A built provider; for the recorded provider also the first record of the session it replays. */
export interface BuiltProvider {
  provider: ModelProvider;
  /** The replayed session's `session.created` (its task and budgets), when the provider is `recorded`. */
  replaying?: SessionCreated;
  /** The fallback chain `settings.fallbacks` describe, built (pass it to `createRein({ fallbacks })`). */
  fallbacks: ModelProvider[];
}

/**
 * Build the provider `settings` describe. The recorded provider reads its source session from `store`; the
 * scripted one loads and validates its script (`SCRIPT_INVALID`). Building sends no request.
 */
export const createProviderFromSettings = async (settings: ProviderSettings, context: { store?: EventStore; fetch?: typeof fetch } = {}): Promise<BuiltProvider> => {
  const fallbacks: ModelProvider[] = [];
  for (const link of settings.fallbacks ?? []) fallbacks.push((await createProviderFromSettings({ ...link, fallbacks: [] }, context)).provider);
  return { ...(await buildOne(settings, context)), fallbacks };
};

const buildOne = async (settings: ProviderSettings, context: { store?: EventStore; fetch?: typeof fetch }): Promise<Omit<BuiltProvider, 'fallbacks'>> => {
  const common = {
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.apiKeyEnv ? { keyHint: settings.apiKeyEnv } : {}),
    ...(settings.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: settings.idleTimeoutMs }),
    ...(context.fetch ? { fetch: context.fetch } : {}),
  };
  switch (settings.provider) {
    case 'openai':
      return { provider: createOpenAICompatibleProvider({ model: settings.model!, baseUrl: settings.baseUrl!, ...common }) };
    case 'anthropic':
      return { provider: createAnthropicProvider({ model: settings.model!, baseUrl: settings.baseUrl!, ...common }) };
    case 'scripted':
      return { provider: createScriptedProvider(await loadScript(settings.script!), { source: settings.script! }) };
    case 'recorded': {
      if (!context.store) throw new ReinError('USAGE', 'the recorded provider needs the event store that holds its session');
      const { provider, recorded } = await loadRecordedProvider(context.store, settings.from!);
      return { provider, replaying: recorded.created };
    }
  }
};
