import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { BlobError } from '../../stores/store-errors.js';
import { flattenRecords } from '../host/step-record.js';

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
  // The workspace's side of a step: the manifest of its first capture, the plan of a rewind, every stored content.
  if (record.type === 'workspace.captured') return typeof data.manifest === 'string' ? [data.manifest] : [];
  if (record.type === 'workspace.rewind-started') return typeof data.plan === 'string' ? [data.plan] : [];
  if (record.type === 'workspace.changed') return workspaceContentRefs(data.changes);
  if (record.type !== 'tool.settled') return [];
  const truncated = data.truncated as { artifact?: unknown } | undefined;
  const artifacts = Array.isArray(data.artifacts) ? data.artifacts : [];
  return [truncated?.artifact, ...artifacts].filter((ref): ref is string => typeof ref === 'string');
};

/** The stored contents a `workspace.changed` names (a file above the size cap was never stored). */
const workspaceContentRefs = (changes: unknown): string[] => {
  if (!Array.isArray(changes)) return [];
  const refs: string[] = [];
  for (const change of changes as Array<{ before?: { type?: string; content?: unknown; unrestorable?: boolean }; after?: { type?: string; content?: unknown; unrestorable?: boolean } }>) {
    for (const entry of [change.before, change.after]) if (entry?.type === 'file' && typeof entry.content === 'string' && entry.unrestorable !== true) refs.push(entry.content);
  }
  return refs;
};

/** Blob reads in flight at once: reads of a stream's blobs are independent, and a delta chain is many small gets. */
const CONCURRENT_READS = 8;

/**
 * Read every blob the records of `stream` name, each distinct one once, through the store's verified read (which
 * checks its BLAKE3, every link of a delta chain included): a blob whose bytes no longer match is `BLOB_CORRUPT`,
 * and a blob the runtime recorded (a model input, a tool's full output) that is gone is `BLOB_NOT_FOUND`; the message
 * names the first record that names it (the damage earliest in the log is the one reported). A ref the model wrote
 * that names no blob is not damage. Resolves with the number of blobs checked.
 */
export const verifyBlobs = async (store: EventStore, stream: string, records: readonly RecordEnvelope[]): Promise<number> => {
  // Each distinct ref with the first record naming it, and the first that requires it.
  const refs = new Map<string, { named: RecordEnvelope; required?: RecordEnvelope }>();
  // A step record's folded `context.projected` names its model input like the record did.
  for (const record of flattenRecords(records)) {
    const required = requiredRefsOf(record);
    for (const ref of [...required, ...(JSON.stringify(record.data ?? null).match(REF_PATTERN) ?? [])]) {
      const entry = refs.get(ref) ?? { named: record };
      if (entry.required === undefined && required.includes(ref)) entry.required = record;
      refs.set(ref, entry);
    }
  }
  const queue = [...refs.keys()];
  const failures: Array<{ error: BlobError; record: RecordEnvelope }> = [];
  let present = 0;
  const worker = async (): Promise<void> => {
    for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
      const entry = refs.get(ref)!;
      try {
        await store.readBlob(stream, ref);
        present++;
      } catch (error) {
        if (!(error instanceof BlobError)) throw error;
        if (error.code === 'BLOB_NOT_FOUND' && entry.required === undefined) continue;
        failures.push({ error, record: error.code === 'BLOB_NOT_FOUND' ? entry.required! : entry.named });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_READS, queue.length) }, worker));
  const first = failures.sort((left, right) => left.record.seq - right.record.seq)[0];
  if (first) {
    first.error.message = `${first.error.message} (named by #${first.record.seq} ${first.record.type} of ${stream})`;
    throw first.error;
  }
  return present;
};
