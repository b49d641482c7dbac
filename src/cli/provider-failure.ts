import type { SessionResult } from '../host/session-host.js';

/**
 * Whether a session ended on a provider failure (its root model call failed after the retries it allows) that a fix
 * outside rein may cure (a key, the network, an endpoint): such a session is continued by `rein resume <id>` once the
 * provider answers again (a new attempt from the last durable step). A script that ran out of turns is not one: the
 * same script runs out again (`rein resume <id> --script <longer>` still continues it).
 */
export const isProviderFailure = (result: Pick<SessionResult, 'status' | 'reason'>): boolean =>
  result.status === 'failed' && (result.reason?.startsWith('model call failed: ') ?? false) && !result.reason!.startsWith('model call failed: script_exhausted:');
