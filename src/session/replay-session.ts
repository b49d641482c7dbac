import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { readSessionRecords } from './read-session.js';
import { verifyRecords, type ReplayResult } from '../host/replay.js';
import { verifyBlobs } from './verify-blobs.js';
import { verifyStreamChain } from './verify-session.js';
import type { ChainReport } from '../../stores/chain-check.js';

/** What `replaySession` verified: the replay's counts and what the chain vouches for. */
export type SessionReplay = ReplayResult & { chain: ChainReport };

/**
 * Verify a whole session: first its chain (`verifyStreamChain`: every record, inputs and facts included, must be the
 * one this machine's key chained), then by replay (no model, no tools, no file changes), then every blob it names
 * (`verifyBlobs`). Resolves with the counts and the chain report, or rejects with `ChainError` (`CHAIN_BROKEN`,
 * `CHAIN_UNAUTHENTICATED`) naming the first record concerned, `DivergenceError` naming the first differing seq,
 * `BLOB_CORRUPT` for a blob whose bytes no longer match its hash, `BLOB_NOT_FOUND` for a recorded blob that is gone.
 * With `allowUnchained`, a log written wholly before the chain is replayed too (its `chain.status` is `unchained`:
 * nothing vouches for its inputs and facts, so the caller must not call it verified — `rein replay` exits 5).
 */
export const replaySession = async (store: EventStore, sessionId: string, options: { inspect?: (event: unknown) => void; allowUnchained?: boolean } = {}): Promise<SessionReplay> => {
  const chain = await verifyStreamChain(store, sessionId, { allowUnchained: options.allowUnchained === true });
  const records = await readSessionRecords(store, sessionId);
  if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  const result = verifyRecords(sessionId, records, options);
  result.tree?.stop();
  // The log is sound only with the blobs it names: each model input and tool output is read back and hash-checked.
  await verifyBlobs(store, sessionId, records);
  return { ...result, chain };
};
