import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore, StreamInfo } from '../../stores/event-store.js';
import { encodeValue } from '../../stores/record-codec.js';
import { StoreError } from '../../stores/store-errors.js';
import { ReinError } from '../host/host-errors.js';
import { sessionStatusOf } from '../host/session-status.js';
import { replaySession } from './replay-session.js';
import { verifyStreamChain } from './verify-session.js';
import type { ChainStatus } from '../../stores/chain-check.js';

/** What `copyStore` did with one stream. */
export interface CopiedStream {
  stream: string;
  /** Records the stream holds in the source (0 when it could not be read). */
  records: number;
  blobs: number;
  /**
   * `copied`; `present` when the destination already held exactly these records (a resumed copy); `extended` when it
   * held a byte-identical prefix and only the new tail was appended (a memory stream that grew); `failed` when the
   * stream was not copied, or copied but not verified (`error` says why).
   */
  outcome: 'copied' | 'present' | 'extended' | 'failed';
  /** Records appended to the destination by this copy. */
  appended?: number;
  /** Records replay verified in the destination (sessions only; undefined for other streams such as `memory`). */
  verified?: number;
  /**
   * What the source's chain said under the source store's key: `authenticated`, or (copied only with `adopt`)
   * `unauthenticated` or `unchained`. The destination re-chains every record under its own key, so a copy is
   * verifiable there; a source whose chain is broken is never copied.
   */
  sourceChain?: ChainStatus;
  /** Why a `failed` stream was not copied: a damaged source (`STORE_CORRUPT_RECORD`), a conflict (`STORE_STREAM_EXISTS`), … */
  error?: { code: string; message: string };
}

/** Options of `copyStore`. */
export interface CopyStoreOptions {
  /** Only these streams (default: every stream of the source). */
  streams?: readonly string[];
  /** Called after each stream, a failed one included. */
  onStream?: (copied: CopiedStream) => void;
  /**
   * Copy streams whose chain is intact but not authenticated by the source store's key (written on another machine) or
   * absent (written before the chain): the destination then vouches for them under its key. Without it they are
   * `failed` with `CHAIN_UNAUTHENTICATED`. A broken chain is never copied (`CHAIN_BROKEN`).
   */
  adopt?: boolean;
}

const PAGE = 500;
const REF_PATTERN = /artifact:\/\/blake3\/[0-9a-f]{64}/g;

const sameBytes = (left: RecordEnvelope, right: RecordEnvelope): boolean => Buffer.from(encodeValue(left)).equals(Buffer.from(encodeValue(right)));

/** The blob refs a page of records names anywhere in its data. */
const refsOf = (records: readonly RecordEnvelope[]): string[] => [...new Set(records.flatMap((record) => JSON.stringify(record.data ?? null).match(REF_PATTERN) ?? []))];

const errorOf = (error: unknown): { code: string; message: string } => ({
  code: typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'ERROR',
  message: (error as Error).message ?? String(error),
});

/** The content of `ref` as the source holds it for `stream`, undefined when it holds none. */
const blobOf = (store: EventStore, stream: string, ref: string): Promise<Uint8Array | undefined> =>
  store.readBlob(stream, ref).catch((error: { code?: string }) => {
    if (error.code === 'BLOB_NOT_FOUND') return undefined;
    throw error;
  });

/**
 * Append the source's records `from..head` of one stream to the destination (whose head is `from - 1`), page by page,
 * each page with the blobs its records name that the destination does not hold yet, and the session status the whole
 * stream leaves (for stores that index it, as a session's own appends do). Resolves with the blobs written.
 */
const appendTail = async (from: EventStore, to: EventStore, info: StreamInfo, start: number, status: string | undefined): Promise<number> => {
  const written = new Set<string>();
  let blobs = 0;
  for (let next = start; next <= info.head; next += PAGE) {
    const page = await from.read(info.stream, { from: next, limit: PAGE });
    const contents: Uint8Array[] = [];
    for (const ref of refsOf(page)) {
      if (written.has(ref)) continue;
      if (start > 1 && (await blobOf(to, info.stream, ref)) !== undefined) continue;
      const content = await blobOf(from, info.stream, ref);
      if (content === undefined) continue;
      contents.push(content);
      written.add(ref);
    }
    blobs += contents.length;
    const drafts = page.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
    const stored = await to.append(info.stream, drafts, { expectedSeq: next - 1, sync: true, createdAt: info.createdAt, ...(contents.length > 0 ? { blobs: contents } : {}), ...(status === undefined ? {} : { status }) });
    stored.forEach((record, index) => {
      if (!sameBytes(record, page[index]!)) throw new ReinError('SESSION_INVALID', `${info.stream}#${record.seq} changed while copying`);
    });
  }
  return blobs;
};

/** Copy one stream; throws what keeps it from being copied or verified. */
const copyStream = async (from: EventStore, to: EventStore, info: StreamInfo, adopt: boolean): Promise<CopiedStream> => {
  // Copying re-chains every record under the destination's key: only a chain the source vouches for is carried over
  // (or, with `adopt`, an intact one the source's key did not write).
  const sourceChain = (await verifyChainOf(from, info.stream, adopt)).status;
  const source = await from.read(info.stream);
  const session = source[0]?.type === 'session.created';
  // The status index (PostgreSQL) gets what the session's own appends would have left: its status after the last record.
  const status = session ? (sessionStatusOf(source) ?? 'active') : undefined;
  const target = await to.read(info.stream);
  if (target.length > source.length || target.some((record, index) => !sameBytes(record, source[index]!))) {
    throw new StoreError('STORE_STREAM_EXISTS', `${info.stream} already exists in the destination with other records`);
  }
  const blobs = target.length < source.length ? await appendTail(from, to, info, target.length + 1, status) : 0;
  const back = await to.read(info.stream);
  if (back.length !== source.length || back.some((record, index) => !sameBytes(record, source[index]!))) {
    throw new ReinError('SESSION_INVALID', `${info.stream} reads back differently from the destination`);
  }
  const outcome: CopiedStream['outcome'] = target.length === 0 ? 'copied' : target.length === source.length ? 'present' : 'extended';
  const verified = session ? (await replaySession(to, info.stream)).verified : undefined;
  if (!session) await verifyStreamChain(to, info.stream);
  return { stream: info.stream, records: source.length, blobs, outcome, appended: source.length - target.length, ...(verified === undefined ? {} : { verified }), sourceChain };
};

/** The source's chain report: authenticated, or with `adopt` intact but unauthenticated or unchained; else `ChainError`. */
const verifyChainOf = async (store: EventStore, stream: string, adopt: boolean) => {
  try {
    return await verifyStreamChain(store, stream, { allowUnchained: adopt });
  } catch (error) {
    if (adopt && (error as { code?: unknown }).code === 'CHAIN_UNAUTHENTICATED') return { status: 'unauthenticated' as const };
    throw error;
  }
};

/**
 * Copy streams from one store to another (LevelDB ⇄ PostgreSQL ⇄ memory), record for record: each record is appended
 * with its own id, type, version, time, actor, cause, correlation and data under the same seq, so the codec writes the
 * same bytes; every blob a record names (appended with the stream, or in the shared blob store) is written into the
 * destination stream in the same batch as the first record naming it; a stream keeps its creation time, and a session
 * gets the status index entry its own appends would have left. Each copied record is read back and compared byte for
 * byte; the source's chain is checked first and the destination chains every record under its own key (README: *The
 * chain*; see `CopyStoreOptions.adopt`), and each copied session is verified by replay, its chain included. A destination stream that already holds exactly the source's
 * records is left as it is (`present`: an interrupted copy can be run again); one that holds a byte-identical prefix
 * gets the rest (`extended`: a memory stream that grew); one that differs is not touched (`failed` with
 * `STORE_STREAM_EXISTS`). A stream that cannot be read, copied or verified is reported `failed` with its error code and
 * the copy goes on with the next one: the result lists every stream. Snapshots are not copied (they are only an
 * optimisation), and a fork arrives as a plain stream (its `session.forked` record still names the parent).
 */
export const copyStore = async (from: EventStore, to: EventStore, options: CopyStoreOptions = {}): Promise<CopiedStream[]> => {
  // Names only, so one stream that cannot be opened does not hide the others.
  const names = from.streamNames ? await from.streamNames() : (await from.streams()).map((info) => info.stream);
  const wanted = options.streams ? new Set(options.streams) : undefined;
  const copied: CopiedStream[] = [];
  const report = (result: CopiedStream) => {
    copied.push(result);
    options.onStream?.(result);
  };
  const infos: StreamInfo[] = [];
  for (const name of names) {
    if (wanted && !wanted.has(name)) continue;
    try {
      const info = await from.info(name);
      if (info && info.head > 0) infos.push(info);
    } catch (error) {
      report({ stream: name, records: 0, blobs: 0, outcome: 'failed', error: errorOf(error) });
    }
  }
  infos.sort((left, right) => left.createdAt - right.createdAt || (left.stream < right.stream ? -1 : 1));
  for (const info of infos) {
    try {
      report(await copyStream(from, to, info, options.adopt === true));
    } catch (error) {
      report({ stream: info.stream, records: info.head, blobs: 0, outcome: 'failed', error: errorOf(error) });
    }
  }
  return copied;
};
