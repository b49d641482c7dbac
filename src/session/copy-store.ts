import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { encodeValue } from '../../stores/record-codec.js';
import { StoreError } from '../../stores/store-errors.js';
import { ReinError } from '../host/host-errors.js';
import { replaySession } from './replay-session.js';

/** What `copyStore` did with one stream. */
export interface CopiedStream {
  stream: string;
  records: number;
  blobs: number;
  /** `copied`, or `present` when the destination already held exactly these records (a resumed copy). */
  outcome: 'copied' | 'present';
  /** Records replay verified in the destination (sessions only; undefined for other streams such as `memory`). */
  verified?: number;
}

/** Options of `copyStore`. */
export interface CopyStoreOptions {
  /** Only these streams (default: every stream of the source). */
  streams?: readonly string[];
  /** Called after each stream. */
  onStream?: (copied: CopiedStream) => void;
}

const PAGE = 500;
const REF_PATTERN = /artifact:\/\/blake3\/[0-9a-f]{64}/g;

const sameBytes = (left: RecordEnvelope, right: RecordEnvelope): boolean => Buffer.from(encodeValue(left)).equals(Buffer.from(encodeValue(right)));

/** The blob refs a page of records names anywhere in its data. */
const refsOf = (records: readonly RecordEnvelope[]): string[] => [...new Set(records.flatMap((record) => JSON.stringify(record.data ?? null).match(REF_PATTERN) ?? []))];

/**
 * Copy streams from one store to another (LevelDB ⇄ PostgreSQL ⇄ memory), record for record: each record is appended
 * with its own id, type, version, time, actor, cause, correlation and data under the same seq, so the codec writes the
 * same bytes; every blob a record names (appended with the stream, or in the shared blob store) is written into the
 * destination stream in the same batch as the first record naming it; a stream keeps its creation time. Each copied
 * record is read back and compared byte for byte, and each copied session is verified by replay
 * (`REPLAY_DIVERGENCE` otherwise). A destination stream that already holds exactly the source's records is left as it
 * is (so an interrupted copy can be run again); one that differs is `STORE_STREAM_EXISTS`. Snapshots are not copied
 * (they are only an optimisation), and a fork arrives as a plain stream (its `session.forked` record still names the
 * parent).
 */
export const copyStore = async (from: EventStore, to: EventStore, options: CopyStoreOptions = {}): Promise<CopiedStream[]> => {
  const infos = await from.streams();
  const wanted = options.streams ? new Set(options.streams) : undefined;
  const copied: CopiedStream[] = [];
  for (const info of infos) {
    if (wanted && !wanted.has(info.stream)) continue;
    const existing = await to.head(info.stream);
    let blobs = 0;
    let outcome: CopiedStream['outcome'] = 'copied';
    if (existing > 0) {
      const [source, target] = [await from.read(info.stream), await to.read(info.stream)];
      if (source.length !== target.length || source.some((record, index) => !sameBytes(record, target[index]!))) {
        throw new StoreError('STORE_STREAM_EXISTS', `${info.stream} already exists in the destination with other records`);
      }
      outcome = 'present';
    } else {
      const written = new Set<string>();
      for (let next = 1; next <= info.head; next += PAGE) {
        const page = await from.read(info.stream, { from: next, limit: PAGE });
        const refs = refsOf(page).filter((ref) => !written.has(ref));
        const contents: Uint8Array[] = [];
        for (const ref of refs) {
          const content = await from.readBlob(info.stream, ref).catch((error: { code?: string }) => {
            if (error.code === 'BLOB_NOT_FOUND') return undefined;
            throw error;
          });
          if (content === undefined) continue;
          contents.push(content);
          written.add(ref);
        }
        blobs += contents.length;
        const drafts = page.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
        const stored = await to.append(info.stream, drafts, { expectedSeq: next - 1, sync: true, createdAt: info.createdAt, ...(contents.length > 0 ? { blobs: contents } : {}) });
        stored.forEach((record, index) => {
          if (!sameBytes(record, page[index]!)) throw new ReinError('SESSION_INVALID', `${info.stream}#${record.seq} changed while copying`);
        });
      }
      const back = await to.read(info.stream);
      const source = await from.read(info.stream);
      if (back.length !== source.length || back.some((record, index) => !sameBytes(record, source[index]!))) {
        throw new ReinError('SESSION_INVALID', `${info.stream} reads back differently from the destination`);
      }
    }
    const [first] = await to.read(info.stream, { limit: 1 });
    const verified = first?.type === 'session.created' ? (await replaySession(to, info.stream)).verified : undefined;
    const result: CopiedStream = { stream: info.stream, records: info.head, blobs, outcome, ...(verified === undefined ? {} : { verified }) };
    copied.push(result);
    options.onStream?.(result);
  }
  return copied;
};
