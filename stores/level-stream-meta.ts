import { COMPACT_RECORD_CODEC_DESCRIPTOR, LEGACY_RECORD_CODEC_DESCRIPTOR, PACKED_RECORD_CODEC_DESCRIPTOR, RECORD_CODEC_DESCRIPTOR } from './record-codec.js';
import type { CodecDescriptor } from './record-codec.js';
import type { StreamSummary } from './event-store.js';
import { CodecMismatchError, CorruptRecordError } from './store-errors.js';

/**
 * What a stream database records about itself under `m!meta`, as JSON so it stays readable whatever the record
 * codec becomes: when it was created, the codec (id and pinned options) its values were written with, and its
 * fork parent. It is written in the same batch as the stream's first records.
 */
export interface StreamMeta {
  createdAt: number;
  codec: CodecDescriptor;
  forkedFrom?: { stream: string; seq: number };
}

/** JSON with object keys sorted, so two descriptions compare equal whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const CURRENT_CODEC = canonicalJson(RECORD_CODEC_DESCRIPTOR);
const PACKED_CODEC = canonicalJson(PACKED_RECORD_CODEC_DESCRIPTOR);
const COMPACT_CODEC = canonicalJson(COMPACT_RECORD_CODEC_DESCRIPTOR);
const LEGACY_CODEC = canonicalJson(LEGACY_RECORD_CODEC_DESCRIPTOR);

/**
 * Whether appends to a stream with this meta are chained as they are: its codec is this build's (`/4`). A stream an
 * earlier build created (`/3`, `/2`, `/1`) is upgraded by its next append: its chain starts there and its meta moves
 * to `/4` (the records it holds keep their layout and stay readable).
 */
export function isChainedMeta(meta: StreamMeta | undefined): boolean {
  return meta?.codec.id === RECORD_CODEC_DESCRIPTOR.id;
}

/** Meta for a new stream: created now, with this build's codec, and its fork parent if any. */
export function createStreamMeta(createdAt: number, forkedFrom?: { stream: string; seq: number }): StreamMeta {
  const meta: StreamMeta = { createdAt, codec: RECORD_CODEC_DESCRIPTOR };
  if (forkedFrom !== undefined) meta.forkedFrom = forkedFrom;
  return meta;
}

/** Meta as stored: UTF-8 JSON. */
export function encodeStreamMeta(meta: StreamMeta): Uint8Array {
  return Buffer.from(JSON.stringify(meta), 'utf8');
}

/**
 * Parses stored meta and checks its codec against the ones this build reads (the current one, and `/3`, `/2` and `/1` from
 * earlier builds): any other id or different pinned options is a `CodecMismatchError` (`STORE_CODEC_MISMATCH`); unparseable
 * meta is a `CorruptRecordError`.
 */
export function decodeStreamMeta(stream: string, stored: Uint8Array): StreamMeta {
  let meta: StreamMeta;
  try {
    meta = JSON.parse(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('utf8')) as StreamMeta;
  } catch (error) {
    throw new CorruptRecordError(stream, undefined, 'stream meta is not JSON', { cause: error });
  }
  if (typeof meta !== 'object' || meta === null || typeof meta.createdAt !== 'number' || typeof meta.codec !== 'object') {
    throw new CorruptRecordError(stream, undefined, 'stream meta has the wrong shape');
  }
  const storedCodec = canonicalJson(meta.codec);
  if (storedCodec !== CURRENT_CODEC && storedCodec !== PACKED_CODEC && storedCodec !== COMPACT_CODEC && storedCodec !== LEGACY_CODEC) throw new CodecMismatchError(stream, storedCodec, CURRENT_CODEC);
  return meta;
}

/** A stored `m!summary` (JSON `{ seq, value }`); undefined when absent or unreadable (it is a cache: the log rebuilds it). */
export function decodeSummary(stored: Uint8Array | undefined): StreamSummary | undefined {
  if (stored === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('utf8')) as { seq?: unknown; value?: unknown };
    return typeof parsed === 'object' && parsed !== null && typeof parsed.seq === 'number' && Number.isInteger(parsed.seq) && parsed.seq >= 0 ? { seq: parsed.seq, value: parsed.value } : undefined;
  } catch {
    return undefined;
  }
}

/** A summary as stored under `m!summary`: UTF-8 JSON. */
export function encodeSummary(summary: StreamSummary): Uint8Array {
  return Buffer.from(JSON.stringify(summary), 'utf8');
}
