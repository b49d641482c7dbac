/**
 * What a worker does with a session it could not run (docs/postgres.md: *Workers*): a problem of the session itself — its spec,
 * its provider, its configuration, its log — is the same on every try, so the session ends `failed` with the reason;
 * anything else (a server not up yet, a store that did not answer) may pass, so the session goes back to the queue
 * and is not claimed again before a backoff, at most `StartRetry.maxAttempts` claims in all.
 */

/** Codes of errors no later try of the same session would avoid. */
const deterministicCodes: ReadonlySet<string> = new Set([
  'USAGE',
  'CONFIG_INVALID',
  'SCRIPT_INVALID',
  'INPUT_INVALID',
  'SESSION_INVALID',
  'SESSION_NOT_FOUND',
  'QUEUE_UNSUPPORTED',
  'REPLAY_DIVERGENCE',
  'MACHINE_ERROR',
  'STORE_CORRUPT_RECORD',
  'STORE_CODEC_MISMATCH',
  'STORE_INVALID_ARGUMENT',
  'BLOB_CORRUPT',
  'HOOK_CONFIG_INVALID',
  'HOOK_UNTRUSTED',
  'PLUGIN_MANIFEST_INVALID',
  'PLUGIN_HOST_VERSION',
  'PLUGIN_PERMISSION_DENIED',
  'PLUGIN_UNTRUSTED',
  'PLUGIN_SOURCE_REFUSED',
  'PLUGIN_CONFIG_INVALID',
  'PLUGIN_CONTRIBUTION_INVALID',
  'PLUGIN_CONFLICT',
  'PLUGIN_FOLDER_INVALID',
]);

/** How a worker retries a session whose start failed for a passing reason (`WorkerOptions.startRetry`). */
export interface StartRetry {
  /** Claims of one session before such a start counts as failed (default 5). */
  maxAttempts?: number;
  /** The backoff after the first failed start, doubled after each next one (default 1,000 ms). */
  baseDelayMs?: number;
  /** The longest backoff (default 30,000 ms). */
  maxDelayMs?: number;
}

/** The defaults of `StartRetry`. */
export const defaultStartRetry = { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 } as const;

/** What to do with a session whose start failed on its `claims`-th claim with `error`. */
export const startFailureOutcome = (error: unknown, claims: number, retry: StartRetry = {}): { state: 'failed' | 'queued'; failure: string; delayMs?: number } => {
  const { maxAttempts, baseDelayMs, maxDelayMs } = { ...defaultStartRetry, ...retry };
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ERROR';
  const message = error instanceof Error ? error.message : String(error);
  const failure = `${code}: ${message}`;
  if (deterministicCodes.has(code)) return { state: 'failed', failure };
  if (claims >= maxAttempts) return { state: 'failed', failure: `${failure} (gave up after ${claims} attempts)` };
  return { state: 'queued', failure, delayMs: Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, claims - 1)) };
};
