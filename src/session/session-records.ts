import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { resolveCallSpecs } from '../../stores/call-spec-refs.js';

/** Every record of a session, its CallSpecs whole (`resolveCallSpecs`), or `SESSION_NOT_FOUND`. */
export const readSession = async (store: Pick<EventStore, 'read'>, sessionId: string): Promise<RecordEnvelope[]> => {
  const records = await store.read(sessionId);
  if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  return resolveCallSpecs(records);
};

/**
 * A reader of the text of blobs a session references (its own stream blobs first, then the shared store) for
 * read-only analysis: undefined for a blob that is not there (`BLOB_NOT_FOUND`). A blob whose bytes no longer match
 * its digest (`BLOB_CORRUPT`) or a store that fails to read (`STORE_CORRUPT_RECORD`, `STORE_IO`) is thrown: damage is
 * reported as damage, never as a blob that was never recorded.
 */
export const blobText =
  (store: Pick<EventStore, 'readBlob'>, sessionId: string) =>
  async (ref: string): Promise<string | undefined> => {
    if (!ref.startsWith('artifact://')) return undefined;
    try {
      return Buffer.from(await store.readBlob(sessionId, ref)).toString('utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'BLOB_NOT_FOUND') return undefined;
      throw error;
    }
  };
