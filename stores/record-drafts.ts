import type { RecordDraft, RecordEnvelope } from '../models/envelope.js';
import { RECORD_TYPE_PATTERN } from '../models/envelope-rules.js';
import { blake3Hex } from './blob-hash.js';
import { COMPACT_RECORD_FORMAT_BYTE, EXTERNAL_RECORD_FORMAT_BYTE, PACKED_RECORD_FORMAT_BYTE, RECORD_FORMAT_BYTE, decodeFramed, encodeFramed, encodeFramedPlain, formatByteOf } from './record-codec.js';
import { canonicalOfCompact } from './chain-canon.js';
import { packDigests } from './packed-digests.js';
import type { StreamBlob } from './stream-blobs.js';
import { CorruptRecordError, StoreError } from './store-errors.js';

/** A batch ready to write: the envelopes the append returns and their stored bytes, index for index. */
export interface PreparedBatch {
  envelopes: RecordEnvelope[];
  values: Uint8Array[];
  /** Compact layout: each record's canonical bytes for the chain (`canonicalRecordBytes`), its payload when it can be. */
  canonicals?: Uint8Array[];
}


/** Record types already checked against `RECORD_TYPE_PATTERN` (a session writes the same few; bounded). */
const validTypes = new Set<string>();

const validType = (type: string): boolean => {
  if (validTypes.has(type)) return true;
  if (!RECORD_TYPE_PATTERN.test(type)) return false;
  if (validTypes.size >= 1_024) validTypes.clear();
  validTypes.add(type);
  return true;
};

/**
 * The `RecordEnvelope` rules for the draft's fields, checked by hand (this runs for every appended record): the name
 * of the first field that breaks them, or undefined for a valid draft. tests/stores/record-drafts.prop.test.ts keeps
 * this equal to the zod schema.
 */
function invalidField(draft: RecordDraft): string | undefined {
  if (typeof draft !== 'object' || draft === null) return 'the draft is not an object';
  // Each field read once and checked in place (no helper per check: four calls per record saved on every append).
  const { id, type, actor, cause, corr } = draft;
  if (typeof id !== 'string' || id.length === 0) return 'id must be a non-empty string';
  if (typeof type !== 'string' || !(validTypes.has(type) || validType(type))) return 'type must be <noun>.<verb> in lower case';
  if (!Number.isSafeInteger(draft.v) || draft.v < 1) return 'v must be an integer ≥ 1';
  if (!Number.isFinite(draft.at)) return 'at must be a finite number';
  if (typeof actor !== 'string' || actor.length === 0) return 'actor must be a non-empty string';
  if (cause !== undefined && typeof cause !== 'string') return 'cause must be a string when present';
  if (corr !== undefined && typeof corr !== 'string') return 'corr must be a string when present';
  return undefined;
}

/** The envelope with its fields in schema order and without undefined optional keys (a canonical encoding). */
function toEnvelope(stream: string, seq: number, draft: RecordDraft): RecordEnvelope {
  // `data` is added last and only when defined, exactly as a read decodes it.
  const envelope = { stream, seq, id: draft.id, type: draft.type, v: draft.v, at: draft.at, actor: draft.actor } as RecordEnvelope;
  if (draft.cause !== undefined) envelope.cause = draft.cause;
  if (draft.corr !== undefined) envelope.corr = draft.corr;
  if (draft.data !== undefined) envelope.data = draft.data;
  return envelope;
}

/**
 * How a record is laid out in its stored value: `packed` (codec `/3`, the default) is a positional array without the
 * stream, its digests stored as bytes; `compact` (codec `/2`) the same array with digests as hex, and `envelope`
 * (codec `/1`) the whole envelope map, both kept for streams an earlier build created.
 */
export type RecordLayout = 'packed' | 'compact' | 'envelope';

/** The stored bytes of one envelope in the given layout (`STORE_INVALID_ARGUMENT` when it cannot be encoded). */
export function encodeRecord(envelope: RecordEnvelope, layout: RecordLayout = 'packed'): Uint8Array {
  if (layout === 'envelope') return encodeFramed(RECORD_FORMAT_BYTE, envelope);
  const packed = layout === 'packed';
  return encodeFramed(packed ? PACKED_RECORD_FORMAT_BYTE : COMPACT_RECORD_FORMAT_BYTE, compactRow(envelope, packed));
}

/** The compact row of an envelope (`[seq, id, type, v, at, actor, cause, corr, data?]`), its digests packed or not. */
function compactRow(envelope: RecordEnvelope, packed: boolean): unknown[] {
  const row: unknown[] = [envelope.seq, envelope.id, envelope.type, envelope.v, envelope.at, envelope.actor, envelope.cause ?? null, envelope.corr ?? null];
  if (envelope.data !== undefined) row.push(packed ? packDigests(envelope.data) : envelope.data);
  return row;
}

/**
 * Validates drafts against the `RecordEnvelope` rules, assigns `stream` and seqs `firstSeq, firstSeq + 1, …`, and
 * encodes them (in `layout`). Unknown draft keys are dropped. Any invalid or unencodable draft rejects the whole batch
 * with `STORE_INVALID_ARGUMENT`, before anything is written.
 */
export function prepareBatch(stream: string, firstSeq: number, drafts: readonly RecordDraft[], layout: RecordLayout = 'packed'): PreparedBatch {
  const envelopes = prepareEnvelopes(stream, firstSeq, drafts);
  if (layout !== 'compact') return { envelopes, values: envelopes.map((envelope) => encodeRecord(envelope, layout)) };
  const values: Uint8Array[] = new Array(envelopes.length);
  const canonicals: Uint8Array[] = new Array(envelopes.length);
  for (let index = 0; index < envelopes.length; index++) {
    const envelope = envelopes[index]!;
    const { stored, readsBack } = encodeFramedPlain(COMPACT_RECORD_FORMAT_BYTE, compactRow(envelope, false));
    values[index] = stored;
    canonicals[index] = canonicalOfCompact(envelope, stored, readsBack);
  }
  return { envelopes, values, canonicals };
}

/**
 * Validates drafts against the `RecordEnvelope` rules and assigns `stream` and seqs `firstSeq, firstSeq + 1, …`,
 * without encoding them (a store that stores the batch as one value encodes it once). Unknown draft keys are dropped;
 * any invalid draft rejects the whole batch with `STORE_INVALID_ARGUMENT`.
 */
export function prepareEnvelopes(stream: string, firstSeq: number, drafts: readonly RecordDraft[]): RecordEnvelope[] {
  if (!Array.isArray(drafts)) throw new StoreError('STORE_INVALID_ARGUMENT', 'records must be an array');
  const envelopes: RecordEnvelope[] = new Array(drafts.length);
  for (let index = 0; index < drafts.length; index++) {
    const draft = drafts[index]!;
    const invalid = invalidField(draft);
    if (invalid !== undefined) throw new StoreError('STORE_INVALID_ARGUMENT', `record ${index} of the batch is invalid: ${invalid}`);
    envelopes[index] = toEnvelope(stream, firstSeq + index, draft);
  }
  return envelopes;
}

/** The envelope a compact row holds, with its fields in schema order (as `toEnvelope` builds it); undefined when malformed. */
function envelopeOfRow(stream: string, row: unknown): RecordEnvelope | undefined {
  if (!Array.isArray(row) || (row.length !== 8 && row.length !== 9)) return undefined;
  const [seq, id, type, v, at, actor, cause, corr] = row as unknown[];
  if (typeof seq !== 'number' || typeof id !== 'string' || typeof type !== 'string' || typeof v !== 'number' || typeof at !== 'number' || typeof actor !== 'string') return undefined;
  if ((cause !== null && typeof cause !== 'string') || (corr !== null && typeof corr !== 'string')) return undefined;
  const envelope = { stream, seq, id, type, v, at, actor } as RecordEnvelope;
  if (cause !== null) envelope.cause = cause;
  if (corr !== null) envelope.corr = corr;
  if (row.length === 9) envelope.data = row[8];
  return envelope;
}

/** A string of a record's data stored as a stream blob: where it goes in `data`, and the blob's BLAKE3 hex. */
export interface ExternalString {
  path: Array<string | number>;
  hex: string;
}

/** Strings at least this long (in UTF-16 units) are stored as stream blobs rather than inside the record. */
export const EXTERNAL_STRING_LENGTH = 16 * 1024;

const HEX_64 = /^[0-9a-f]{64}$/;

export function externalsOfRow(value: unknown): ExternalString[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const externals: ExternalString[] = [];
  for (const entry of value as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return undefined;
    const [path, hex] = entry as [unknown, unknown];
    if (!Array.isArray(path) || path.length === 0 || !path.every((key) => typeof key === 'string' || (typeof key === 'number' && Number.isSafeInteger(key) && key >= 0))) return undefined;
    if (typeof hex !== 'string' || !HEX_64.test(hex)) return undefined;
    externals.push({ path: path as Array<string | number>, hex });
  }
  return externals;
}

/**
 * Decodes a stored record in any layout, leaving the strings an external row keeps in stream blobs to the caller
 * (`attachExternal`): the envelope (with nil in their places) and the list of them.
 */
export function decodeStoredRecord(stored: Uint8Array, stream: string, seq: number): { record: RecordEnvelope; externals?: ExternalString[] } {
  if (formatByteOf(stored) !== EXTERNAL_RECORD_FORMAT_BYTE) return { record: decodeRecord(stored, stream, seq) };
  const row = decodeFramed(stored, { stream, seq }, EXTERNAL_RECORD_FORMAT_BYTE);
  const externals = Array.isArray(row) && row.length === 10 ? externalsOfRow(row[9]) : undefined;
  const record = externals === undefined ? undefined : envelopeOfRow(stream, (row as unknown[]).slice(0, 9));
  if (record === undefined || externals === undefined) throw new CorruptRecordError(stream, seq, 'stored value is not an external record row');
  return { record, externals };
}

/** Puts an external string back in its place; a path that does not lead to a nil in the data is `CorruptRecordError`. */
export function attachExternal(record: RecordEnvelope, external: ExternalString, text: string): void {
  let container: unknown = record.data;
  for (let index = 0; index < external.path.length - 1; index++) {
    container = typeof container === 'object' && container !== null ? (container as Record<string | number, unknown>)[external.path[index]!] : undefined;
  }
  const last = external.path.at(-1)!;
  if (typeof container !== 'object' || container === null || (container as Record<string | number, unknown>)[last] !== null) {
    throw new CorruptRecordError(record.stream, record.seq, `external string at ${external.path.join('.')} has no place in the record`);
  }
  (container as Record<string | number, unknown>)[last] = text;
}

/** The long strings of `data`, depth first, with their paths (keys named `__proto__` are left inline). */
function longStrings(data: unknown, path: Array<string | number>, found: Array<{ path: Array<string | number>; text: string }>): void {
  if (typeof data === 'string') {
    if (data.length >= EXTERNAL_STRING_LENGTH && path.length > 0) found.push({ path: [...path], text: data });
    return;
  }
  if (typeof data !== 'object' || data === null) return;
  if (Array.isArray(data)) {
    data.forEach((item, index) => {
      path.push(index);
      longStrings(item, path, found);
      path.pop();
    });
    return;
  }
  for (const [key, value] of Object.entries(data)) {
    if (key === '__proto__') continue;
    path.push(key);
    longStrings(value, path, found);
    path.pop();
  }
}

/**
 * The stored bytes of a compact record whose long strings (≥ `EXTERNAL_STRING_LENGTH`) go to stream blobs, with those
 * blobs; undefined when the record has none (its compact bytes `value` stand). The external row (format byte 3) is the
 * form `/2` streams hold them in; `/3` streams keep them in a group row's `externals` (record-groups.ts).
 */
export async function externalizeRecord(envelope: RecordEnvelope, value: Uint8Array): Promise<{ value: Uint8Array; blobs: StreamBlob[] } | undefined> {
  if (value.length < EXTERNAL_STRING_LENGTH) return undefined;
  const moved = await externalStrings(envelope.data);
  if (moved === undefined) return undefined;
  const row = [envelope.seq, envelope.id, envelope.type, envelope.v, envelope.at, envelope.actor, envelope.cause ?? null, envelope.corr ?? null, moved.data, moved.externals];
  return { value: encodeFramed(EXTERNAL_RECORD_FORMAT_BYTE, row), blobs: moved.blobs };
}

/**
 * A record's data with its long strings (≥ `EXTERNAL_STRING_LENGTH`) replaced by nil, the list of where they were
 * and their blobs' BLAKE3 (`[[path, hex], …]`), and the blobs; undefined when the data holds none.
 */
export async function externalStrings(data: unknown): Promise<{ data: unknown; externals: Array<[Array<string | number>, string]>; blobs: StreamBlob[] } | undefined> {
  if (data === undefined) return undefined;
  const found: Array<{ path: Array<string | number>; text: string }> = [];
  longStrings(data, [], found);
  if (found.length === 0) return undefined;
  const copy = structuredClone(data) as Record<string | number, unknown>;
  const externals: Array<[Array<string | number>, string]> = [];
  const blobs: StreamBlob[] = [];
  for (const { path, text } of found) {
    const bytes = Buffer.from(text, 'utf8');
    const hex = await blake3Hex(bytes);
    let container = copy;
    for (let index = 0; index < path.length - 1; index++) container = container[path[index]!] as Record<string | number, unknown>;
    container[path.at(-1)!] = null;
    externals.push([path, hex]);
    blobs.push({ hex, bytes });
  }
  return { data: copy, externals, blobs };
}

/**
 * Decodes a stored record in the envelope, compact or packed layout (the format byte says which); anything that is
 * not an envelope is `CorruptRecordError`, and so is an external row (read those with `decodeStoredRecord`). The
 * compact and packed layouts take their stream from `stream`, the database they were read from.
 */
export function decodeRecord(stored: Uint8Array, stream: string, seq: number): RecordEnvelope {
  const format = formatByteOf(stored);
  if (format === PACKED_RECORD_FORMAT_BYTE || format === COMPACT_RECORD_FORMAT_BYTE) {
    const envelope = envelopeOfRow(stream, decodeFramed(stored, { stream, seq }, format));
    if (envelope === undefined) throw new CorruptRecordError(stream, seq, 'stored value is not a record row');
    return envelope;
  }
  const value = decodeFramed(stored, { stream, seq }, RECORD_FORMAT_BYTE);
  if (typeof value !== 'object' || value === null || typeof (value as { seq?: unknown }).seq !== 'number') {
    throw new CorruptRecordError(stream, seq, 'stored value is not a record envelope');
  }
  return value as RecordEnvelope;
}
