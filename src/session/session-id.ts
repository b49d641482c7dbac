import { isStreamName } from '../../models/envelope-rules.js';
import { ReinError } from '../host/host-errors.js';

/**
 * Refuse what cannot be a session id (`SESSION_INVALID`, before any store is asked): 1–128 letters, digits, `.`, `_`
 * or `-`, starting with a letter or a digit. `what` names the argument in the message (`sessionId`, `newSessionId`).
 */
export const checkSessionId = (id: unknown, what = 'sessionId'): void => {
  if (isStreamName(id)) return;
  throw new ReinError('SESSION_INVALID', `${what} ${JSON.stringify(id) ?? String(id)} is not a session id: use 1–128 letters, digits, ".", "_" or "-", starting with a letter or a digit`);
};
