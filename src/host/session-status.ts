import { rootPath } from './root-path.js';

/** The fields of a record (stored or drafted) that decide a session's status. */
export interface StatusSource {
  type: string;
  actor: string;
  data?: unknown;
}

/**
 * The session status the newest status-bearing root record of `newestFirst` gives: the `session.ended` outcome,
 * `interrupted`, `idle`, `awaiting-approval` or `active`; undefined when no record there decides it.
 */
export const statusFromNewest = (newestFirst: Iterable<StatusSource>): string | undefined => {
  for (const record of newestFirst) {
    if (record.actor !== rootPath) continue;
    if (record.type === 'session.ended') return (record.data as { status: string }).status;
    if (record.type === 'session.interrupted') return 'interrupted';
    if (record.type === 'actor.transitioned') {
      const to = (record.data as { to: unknown }).to;
      if (to === 'idle') return 'idle';
      return typeof to === 'object' && to !== null && (to as { running?: unknown }).running === 'awaitingApproval' ? 'awaiting-approval' : 'active';
    }
  }
  return undefined;
};

/** The status a batch leaves its session in (for stores that index it), or undefined when the batch does not change it. */
export const statusAfterBatch = (batch: readonly StatusSource[]): string | undefined => {
  const newestFirst = function* () {
    for (let index = batch.length - 1; index >= 0; index--) yield batch[index]!;
  };
  return statusFromNewest(newestFirst());
};
