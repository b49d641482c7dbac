import { randomBytes } from 'node:crypto';

/**
 * Record ids: a random per-process prefix plus a counter, so ids are unique across processes and forks and cost
 * no entropy per record. Replay never compares ids; `cause` links are compared by the ids stored in the log.
 */
export const createIdGenerator = (): (() => string) => {
  const prefix = randomBytes(6).toString('base64url');
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36)}`;
};
