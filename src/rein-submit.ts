import { resolve as resolvePath } from 'node:path';
import type { Budgets } from '../models/budgets.js';
import type { ReinOptions } from './rein-options.js';
import { ReinError } from './host/host-errors.js';
import { displayEndpoint } from './providers/wire-format.js';
import { checkSessionOptions, newSessionId } from './session/start-session.js';
import type { QueuedSession } from './worker/queued-session.js';
import { submitSession } from './worker/submit-session.js';
import { ProviderName } from './providers/provider-settings.js';
import { loadScript, type ScriptedProvider } from './providers/scripted-provider.js';
import { checkSessionId } from './session/session-id.js';

/** Options of `Rein.submit`. */
export interface SubmitOptions {
  task: string;
  sessionId?: string;
  budgets?: Partial<Budgets>;
  /** Rerun in-doubt effects that need confirmation when a worker resumes the session. */
  confirmInDoubt?: boolean;
}

/**
 * `Rein.submit`: queue a session for `rein worker` with what the harness would run it with — its workspace, the
 * provider's identity (and the scripted provider's script, never a key), permissions, sandbox overrides, budgets and
 * the locations of `cli` plugin specs. Resolves with the session id. A provider a worker cannot build from its
 * identity (a custom `ModelProvider`, a plugin's) is `QUEUE_UNSUPPORTED`, nothing queued.
 */
export const submitToWorkers = async (options: ReinOptions, harness: { workspace: string; clock: () => number }, submitOptions: SubmitOptions): Promise<string> => {
  checkSessionOptions(submitOptions, 'submit');
  if (submitOptions.sessionId !== undefined) checkSessionId(submitOptions.sessionId);
  const { name: providerName, model: providerModel, source } = options.provider;
  // A worker builds the provider from its identity alone (and its own keys): one it cannot build would never start.
  const unbuildable = [options.provider, ...(options.fallbacks ?? [])].find((provider) => !ProviderName.safeParse(provider.name).success);
  if (unbuildable) throw new ReinError('QUEUE_UNSUPPORTED', `a worker cannot build the provider ${JSON.stringify(unbuildable.name)}: it builds openai, anthropic, scripted and recorded providers from their name, model and endpoint; run this session with createSession instead`);
  // The scripted provider's script travels with the session: the one it plays, else the file it was loaded from.
  const carried = (options.provider as Partial<ScriptedProvider>).script;
  const script = providerName !== 'scripted' ? undefined : (carried ?? (source === undefined ? undefined : await loadScript(resolvePath(harness.workspace, source))));
  if (providerName === 'scripted' && script === undefined) throw new ReinError('SCRIPT_INVALID', 'the scripted provider has no script a worker could play');
  return submitSession(options.store, {
    sessionId: submitOptions.sessionId ?? newSessionId(harness.clock()),
    task: submitOptions.task,
    workspace: harness.workspace,
    provider: {
      name: providerName,
      ...(providerModel === undefined ? {} : { model: providerModel }),
      ...(source === undefined ? {} : { source: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(source) ? displayEndpoint(source) : source }),
      ...(options.fallbacks && options.fallbacks.length > 0 ? { fallbacks: options.fallbacks.map((link) => ({ name: link.name, ...(link.model ? { model: link.model } : {}), ...(link.source ? { source: displayEndpoint(link.source) } : {}) })) } : {}),
    },
    ...(script === undefined ? {} : { script }),
    permissions: JSON.parse(JSON.stringify(options.permissions ?? {})) as QueuedSession['permissions'],
    sandbox: JSON.parse(JSON.stringify(options.sandbox ?? {})) as QueuedSession['sandbox'],
    budgets: { ...options.budgets, ...submitOptions.budgets },
    // One-run plugins (`--plugin`) travel with the session; the worker reads the workspace's plugins and hooks itself.
    plugins: (options.plugins ?? []).flatMap((entry) => ('source' in entry && entry.source === 'cli' && entry.location ? [resolvePath(entry.location)] : [])),
    confirmInDoubt: submitOptions.confirmInDoubt ?? false,
  });
};
