import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { readSessionRecords } from './read-session.js';
import { verifyRecords, type ReplayResult } from '../host/replay.js';

/**
 * Read a whole session and verify it by replay (no model, no tools, no file changes). Resolves with the counts,
 * or rejects with `DivergenceError` naming the first differing seq.
 */
export const replaySession = async (store: EventStore, sessionId: string, options: { inspect?: (event: unknown) => void } = {}): Promise<ReplayResult> => {
  const records = await readSessionRecords(store, sessionId);
  if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  const result = verifyRecords(sessionId, records, options);
  result.tree?.stop();
  return result;
};
