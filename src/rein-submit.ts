import { resolve as resolvePath } from 'node:path';
import type { Budgets } from '../models/budgets.js';
import type { ReinOptions } from './rein-options.js';
import { ReinError } from './host/host-errors.js';
import { displayEndpoint } from './providers/wire-format.js';
import { checkSessionOptions, newSessionId } from './session/start-session.js';
import { hostFileProblem, readHostFile } from './util/read-regular-file.js';
import type { QueuedSession } from './worker/queued-session.js';
import { submitSession } from './worker/submit-session.js';
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
 * the locations of `cli` plugin specs. Resolves with the session id.
 */
export const submitToWorkers = async (options: ReinOptions, harness: { workspace: string; clock: () => number }, submitOptions: SubmitOptions): Promise<string> => {
  checkSessionOptions(submitOptions, 'submit');
  if (submitOptions.sessionId !== undefined) checkSessionId(submitOptions.sessionId);
  const { name: providerName, model: providerModel, source } = options.provider;
  const scriptFile = providerName === 'scripted' && source !== undefined ? await readHostFile(resolvePath(harness.workspace, source)) : undefined;
  if (scriptFile && !scriptFile.ok) throw new ReinError('SCRIPT_INVALID', `cannot read the script: ${hostFileProblem(source!, scriptFile)}`);
  const script = scriptFile?.ok ? JSON.parse(scriptFile.bytes.toString('utf8')) : undefined;
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
