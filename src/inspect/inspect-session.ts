import type { RecordEnvelope } from '../../models/envelope.js';
import { verifyRecords, type ReplayResult } from '../host/replay.js';

/**
 * Stream a recorded session to an inspector: replay its log through a fresh actor tree whose inspection events go to
 * `inspect` (the same verified replay `rein replay` runs: no model, no tools, no writes), so every actor, event and
 * snapshot arrives in the order it happened. Rejects with `DivergenceError` if the log does not reproduce.
 */
export const inspectRecords = (stream: string, records: readonly RecordEnvelope[], inspect: (event: unknown) => void): ReplayResult => {
  const result = verifyRecords(stream, records, { inspect });
  result.tree?.stop();
  return result;
};
