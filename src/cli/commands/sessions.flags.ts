/* The flags of `rein sessions`, shared by its declaration and its action without an import cycle (and without zod). */
import type { CommonOptions } from '../command-options.js';
import { ReinError } from '../../host/host-errors.js';
import { sessionStatuses, type ListSessionsOptions } from '../../session/session-catalog.js';
import { isStreamName } from '../../../models/envelope-rules.js';

export interface SessionsCommandOptions extends CommonOptions {
  /** `--status <status>`: only sessions in this status. */
  status?: string;
  /** `--limit <n>`: a page of at most n sessions. */
  limit?: string;
  /** `--after <id>`: the page after this session (the last one of the previous page). */
  after?: string;
}

/** The largest page `--limit` (and the viewer's `limit`) takes. */
export const maxSessionsPage = 10_000;

/**
 * `--status`, `--limit`, `--after` checked: a status `rein sessions` lists, a whole number 1..10,000 written in plain
 * digits, a session id (a valid stream name). Anything else is `USAGE` naming the flag; nothing is read.
 */
export const sessionsPageOf = (options: { status?: unknown; limit?: unknown; after?: unknown }): ListSessionsOptions => {
  const page: ListSessionsOptions = {};
  if (options.status !== undefined) {
    if (typeof options.status !== 'string' || !(sessionStatuses as readonly string[]).includes(options.status)) {
      throw new ReinError('USAGE', `--status must be one of ${sessionStatuses.join(', ')}; got ${JSON.stringify(options.status)}`);
    }
    page.status = options.status;
  }
  if (options.limit !== undefined) {
    const text = options.limit;
    const limit = typeof text === 'string' && /^[1-9][0-9]{0,5}$/.test(text) ? Number(text) : NaN;
    if (!(limit >= 1 && limit <= maxSessionsPage)) throw new ReinError('USAGE', `--limit must be a whole number from 1 to ${maxSessionsPage}; got ${JSON.stringify(text)}`);
    page.limit = limit;
  }
  if (options.after !== undefined) {
    if (!isStreamName(options.after)) throw new ReinError('USAGE', `--after must be a session id (the last one of the previous page); got ${JSON.stringify(options.after)}`);
    page.after = options.after;
  }
  return page;
};
