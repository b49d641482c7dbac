import type { LevelStreamAccess } from './level-stream-access.js';
import { wholeBlob } from './level-blob-writes.js';
import { BLOB_KEYS, DELTA_KEYS, META_KEY, recordKey } from './level-keys.js';
import { encodeStreamMeta, type StreamMeta } from './level-stream-meta.js';
import type { StreamWrite } from './level-stream.js';
import { encodeChainedGroups } from './record-groups.js';
import { assertForkPoint } from './store-arguments.js';
import { StoreError } from './store-errors.js';

/*
 * The LevelDB store's fork (stores/level-event-store.ts `fork`): what is copied from the parent stream — its records
 * 1..atSeq under the new name with their chain fields, and its blobs — and the one batch that writes the new stream.
 * The store keeps the locking, the write and telling the tails.
 */

/** What a fork copies: the new stream's batch (its records, blobs and meta still to add) and the chain field of its last record. */
export interface ForkCopy {
  /** The record groups and the parent's blob entries, as writes (the meta goes last: `forkWrites`). */
  writes: StreamWrite[];
  /** The chain field of the fork point's record: the new stream's predecessor (undefined when it is not chained). */
  predecessor: Uint8Array | undefined;
}

/**
 * Reads `stream`'s records 1..`atSeq` and blobs and encodes them for the stream `name`: the copies are stored in groups
 * with their chain fields as they are (a record's digest leaves its stream out); their long strings go back to blobs
 * (the parent's blobs are copied as they are). Raises `STORE_STREAM_NOT_FOUND` or the fork point's range error.
 */
export const readForkCopy = async (access: LevelStreamAccess, stream: string, atSeq: number, name: string): Promise<ForkCopy> => {
  const copied = await access.withReadable(
    stream,
    async (opened) => {
      if (opened.meta === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
      assertForkPoint(stream, atSeq, opened.head);
      return { entries: await opened.readChained({ low: 1, high: atSeq, reverse: false }), blobs: [...(await opened.rawEntries(BLOB_KEYS)), ...(await opened.rawEntries(DELTA_KEYS))] };
    },
    undefined,
  );
  if (copied === undefined) throw new StoreError('STORE_STREAM_NOT_FOUND', `no stream ${stream}`);
  const groups = await encodeChainedGroups(
    copied.entries.map(({ record }) => ({ ...record, stream: name })),
    copied.entries.map(({ field }) => field),
  );
  const writes: StreamWrite[] = groups.map((group) => ({ type: 'put', key: recordKey(group.lastSeq), value: group.value }));
  for (const [key, value] of copied.blobs) writes.push({ type: 'put', key, value });
  for (const group of groups) writes.push(...group.blobs.map(wholeBlob));
  return { writes, predecessor: copied.entries.at(-1)?.field };
};

/** The new stream's whole batch: the copy, then its meta (naming the fork point). */
export const forkWrites = (copy: ForkCopy, meta: StreamMeta): StreamWrite[] => [...copy.writes, { type: 'put', key: META_KEY, value: encodeStreamMeta(meta) }];
