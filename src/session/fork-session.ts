import { isDerivedType, recordVersion } from '../../models/records.js';
import type { EventStore } from '../../stores/event-store.js';
import { sessionStatusOf } from '../host/session-status.js';
import { rootPath } from '../host/actor-tree.js';
import { ReinError } from '../host/host-errors.js';
import { checkSessionId } from './session-id.js';
import { createIdGenerator } from '../host/record-ids.js';
import { newSessionId } from './start-session.js';
import { isReservedStreamName } from '../memory/memory-stream.js';

export interface ForkOptions {
  newSessionId?: string;
  clock?: () => number;
  /** Why the fork is made (recorded on `session.forked`). */
  reason?: string;
}

/**
 * Fork a session at `atSeq`: a new stream holding records 1..atSeq followed by `session.forked`. The parent is
 * untouched. `atSeq` must end a step (the next record may not be one that replay regenerates), so replaying the
 * fork to `atSeq` equals the parent's state there; otherwise `FORK_NOT_AT_BOUNDARY` names the step's bounds.
 */
export const forkSession = async (store: EventStore, sessionId: string, atSeq: number, options: ForkOptions = {}): Promise<string> => {
  checkSessionId(sessionId);
  if (options.newSessionId !== undefined) checkSessionId(options.newSessionId, 'newSessionId');
  if (isReservedStreamName(sessionId) || (options.newSessionId !== undefined && isReservedStreamName(options.newSessionId))) throw new ReinError('SESSION_INVALID', 'the memory stream is not a session');
  await checkForkPoint(store, sessionId, atSeq);
  const clock = options.clock ?? Date.now;
  const forkId = options.newSessionId ?? newSessionId(clock());
  await store.fork(sessionId, atSeq, { newStream: forkId });
  // The fork's status (for stores that index it): `forked` until a resume runs it, or its parent's end when the fork
  // point is past it.
  const forked = { id: createIdGenerator()(), type: 'session.forked', v: recordVersion('session.forked'), at: clock(), actor: rootPath, data: { parent: sessionId, atSeq, ...(options.reason === undefined ? {} : { reason: options.reason }) } };
  const status = sessionStatusOf([...(await store.read(forkId, { from: Math.max(1, atSeq - 63) })), forked]) ?? 'active';
  await store.append(forkId, [forked], { expectedSeq: atSeq, status });
  return forkId;
};

/**
 * Check that a fork of `sessionId` at `atSeq` can be made (changing nothing): `SESSION_NOT_FOUND`, `USAGE` for a seq
 * outside the log, `FORK_NOT_AT_BOUNDARY` naming the step's bounds for a seq inside a step.
 */
export const checkForkPoint = async (store: EventStore, sessionId: string, atSeq: number): Promise<void> => {
  const head = await store.head(sessionId);
  if (head === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  if (!Number.isInteger(atSeq) || atSeq < 1 || atSeq > head) throw new ReinError('USAGE', `the fork point (atSeq ${JSON.stringify(atSeq) ?? String(atSeq)}) must be a seq between 1 and ${head}, the head of ${sessionId}`);
  const [next] = await store.read(sessionId, { from: atSeq + 1, limit: 1 });
  if (next && isDerivedType(next.type)) {
    const before = await store.read(sessionId, { to: atSeq, reverse: true, limit: 1000 });
    const start = before.find((record) => !isDerivedType(record.type))?.seq ?? 1;
    const after = await store.read(sessionId, { from: atSeq + 1, limit: 1000 });
    const end = (after.find((record) => !isDerivedType(record.type))?.seq ?? head + 1) - 1;
    throw new ReinError('FORK_NOT_AT_BOUNDARY', `seq ${atSeq} is inside the step ${start}..${end}; fork at ${start - 1 > 0 ? `${start - 1} or ` : ''}${end}`);
  }
};
