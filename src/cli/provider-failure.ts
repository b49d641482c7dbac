import type { SessionResult } from '../host/session-host.js';

/**
 * Whether a session ended on a provider failure (its root model call failed after the retries it allows): such a
 * session is continued by `rein resume <id>` once the provider answers again (a new attempt from the last durable step).
 */
export const isProviderFailure = (result: Pick<SessionResult, 'status' | 'reason'>): boolean => result.status === 'failed' && (result.reason?.startsWith('model call failed: ') ?? false);
