import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { BlobError } from '../../stores/store-errors.js';

const REF_PATTERN = /artifact:\/\/blake3\/[0-9a-f]{64}/g;

/**
 * Refs the runtime itself wrote into a record, whose blobs the session cannot be read without: the model input a
 * `context.projected` names, and the full output a tool result points to. Any other ref in the log (one the model
 * wrote in its text or in a tool's arguments) names a blob that may never have existed.
 */
const requiredRefsOf = (record: RecordEnvelope): string[] => {
  const data = record.data as Record<string, unknown> | undefined;
  if (!data) return [];
  if (record.type === 'context.projected') return typeof data.input === 'string' ? [data.input] : [];
  if (record.type !== 'tool.settled') return [];
  const truncated = data.truncated as { artifact?: unknown } | undefined;
  const artifacts = Array.isArray(data.artifacts) ? data.artifacts : [];
  return [truncated?.artifact, ...artifacts].filter((ref): ref is string => typeof ref === 'string');
};

/**
 * Read every blob the records of `stream` name, each distinct one once, through the store's verified read (which
 * checks its BLAKE3, every link of a delta chain included): a blob whose bytes no longer match is `BLOB_CORRUPT`,
 * and a blob the runtime recorded (a model input, a tool's full output) that is gone is `BLOB_NOT_FOUND`; the message
 * names the first record that names it. A ref the model wrote that names no blob is not damage. Resolves with the
 * number of blobs checked.
 */
export const verifyBlobs = async (store: EventStore, stream: string, records: readonly RecordEnvelope[]): Promise<number> => {
  const present = new Set<string>();
  const absent = new Set<string>();
  for (const record of records) {
    const required = new Set(requiredRefsOf(record));
    const named = new Set([...required, ...(JSON.stringify(record.data ?? null).match(REF_PATTERN) ?? [])]);
    for (const ref of named) {
      if (present.has(ref) || (absent.has(ref) && !required.has(ref))) continue;
      try {
        if (absent.has(ref)) throw new BlobError('BLOB_NOT_FOUND', ref);
        await store.readBlob(stream, ref);
        present.add(ref);
      } catch (error) {
        if (!(error instanceof BlobError)) throw error;
        if (error.code === 'BLOB_NOT_FOUND' && !required.has(ref)) {
          absent.add(ref);
          continue;
        }
        error.message = `${error.message} (named by #${record.seq} ${record.type} of ${stream})`;
        throw error;
      }
    }
  }
  return present.size;
};
