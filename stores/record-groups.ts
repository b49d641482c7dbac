import type { RecordEnvelope } from '../models/envelope.js';
import { packDigests, packPlainDigests } from './packed-digests.js';
import { ExtensionScope } from './plain-pack.js';
import { FRAME_HEADER_BYTES, decodeFramed, encodeFramed, formatByteOf } from './record-codec.js';
import { EXTERNAL_STRING_LENGTH, decodeStoredRecord, externalStrings, externalsOfRow } from './record-drafts.js';
import type { ExternalString } from './record-drafts.js';
import type { StreamBlob } from './stream-blobs.js';
import { CorruptRecordError } from './store-errors.js';
import { CHAIN_FIELD_BYTES, fieldOf } from './chain.js';
import { crc32 } from 'node:zlib';

/**
 * The records of one append stored as one value (codec `/3`), under the key of the last one's seq. A step's input
 * and the records its transition derived are appended together and share most of their envelope: the same `cause`
 * (the input), ids that follow one another, times a few milliseconds apart. Stored one per value, each paid for its
 * own key, checksum, seq, id, time and cause — about half of what a round trip cost on disk. A group stores:
 *
 *     [firstSeq, [row, …]]    row: [id | nil, type, v, at, actor, cause, corr, data?, externals?]
 *
 * - `id` is nil when it is the one rein's id generator makes after the previous row's (`nextId`);
 * - `at` is the first row's time, and on later rows the difference from the previous row's, as an integer when both
 *   times are safe integers; any other time is stored whole, wrapped in a one-element array;
 * - `cause` is nil (none), a string, or the index of the row in this group whose id it is;
 * - `data` is packed like a packed row's (digests as bytes), and `externals` lists the long strings kept in stream
 *   blobs, as in an external row.
 *
 * A chained group (codec `/4`, docs/architecture.md: *The chain*) has a third element: the rows' chain fields, 12 bytes each, in one
 * byte string (`[firstSeq, [row, …], fields]`). A group is chained throughout or not at all.
 *
 * A read returns exactly the envelopes that were appended; a property test checks it against the per-record layouts.
 * Key order still gives seq order, and a read of seqs from `low` starts at the first key at or after `low`: the group
 * holding `low`.
 */
export const GROUP_RECORD_FORMAT_BYTE = 0x07;

/** Larger appends (a copied or forked stream) are stored in groups of at most this many records. */
export const MAX_GROUP_RECORDS = 128;

/**
 * The id rein's generator makes after `id` (an 8-character prefix and a base-36 counter, src/host/record-ids.ts);
 * undefined for an id of any other shape, which a group then stores as it is.
 */
export function nextId(id: string): string | undefined {
  if (id.length < 9 || id.length > 20) return undefined;
  const counter = id.slice(8);
  const value = Number.parseInt(counter, 36);
  if (!Number.isSafeInteger(value) || value.toString(36) !== counter) return undefined;
  return id.slice(0, 8) + (value + 1).toString(36);
}

/** One stored group's bytes and the blobs its long strings go to. */
export interface EncodedGroup {
  /** The seq of the group's last record: its key. */
  lastSeq: number;
  value: Uint8Array;
  blobs: StreamBlob[];
}

const encodeTime = (at: number, previous: number | undefined): number | [number] =>
  previous === undefined ? at : Number.isSafeInteger(at) && Number.isSafeInteger(previous) && Number.isSafeInteger(at - previous) ? at - previous : [at];

/**
 * Encodes consecutive envelopes (seqs `first.seq, first.seq + 1, …`) as groups of at most `MAX_GROUP_RECORDS`.
 * Throws what `encodeFramed` throws for a value msgpack cannot carry (`STORE_INVALID_ARGUMENT`).
 */
export async function encodeGroups(envelopes: readonly RecordEnvelope[]): Promise<EncodedGroup[]> {
  const groups: EncodedGroup[] = [];
  for (let start = 0; start < envelopes.length; start += MAX_GROUP_RECORDS) {
    groups.push(await encodeGroupMovingLongStrings(envelopes.slice(start, start + MAX_GROUP_RECORDS)));
  }
  return groups;
}

/**
 * True when `data` holds a string `externalStrings` would move to a blob: one of at least `EXTERNAL_STRING_LENGTH`
 * characters below the top level, not under a key named `__proto__`. The same walk without collecting paths or
 * copying anything, so a large group of short strings costs one pass that allocates nothing.
 */
const holdsLongString = (data: unknown, nested: boolean): boolean => {
  if (typeof data === 'string') return nested && data.length >= EXTERNAL_STRING_LENGTH;
  if (typeof data !== 'object' || data === null) return false;
  if (Array.isArray(data)) {
    for (let index = 0; index < data.length; index++) if (holdsLongString(data[index], true)) return true;
    return false;
  }
  for (const key of Object.keys(data)) if (key !== '__proto__' && holdsLongString((data as Record<string, unknown>)[key], true)) return true;
  return false;
};

/**
 * Encodes a group, moving its long strings to blobs when it holds any. A group shorter than a long string cannot hold
 * one; a longer one is walked once for them, and encoded a second time (moving them) only when it does: a merged
 * append of many steps is long but rarely holds a long string, and scanning each record's data with its paths and
 * encoding the whole group twice cost more than its records' encoding.
 */
async function encodeGroupMovingLongStrings(envelopes: readonly RecordEnvelope[]): Promise<EncodedGroup> {
  return encodeGroupKeepingStrings(envelopes) ?? encodeGroup(envelopes);
}

/**
 * The group encoded with its strings inline, when it holds no long string to move to a blob (undefined when it does):
 * nearly every append, encoded without a promise or a turn of the event loop (this runs on a synced write's critical path).
 */
function encodeGroupKeepingStrings(envelopes: readonly RecordEnvelope[]): EncodedGroup | undefined {
  const rows: unknown[] = [];
  let previous: RecordEnvelope | undefined;
  for (const envelope of envelopes) {
    const row = rowOf(envelopes, envelope, previous);
    if (envelope.data !== undefined) row.push(new ExtensionScope(envelope.data));
    rows.push(row);
    previous = envelope;
  }
  const value = packGroup(envelopes, rows);
  if (value.length >= EXTERNAL_STRING_LENGTH && envelopes.some((envelope) => holdsLongString(envelope.data, false))) return undefined;
  return { lastSeq: envelopes.at(-1)!.seq, value, blobs: [] };
}

/** A group moving its long strings to blobs (the rare path: an append holding one). */
async function encodeGroup(envelopes: readonly RecordEnvelope[]): Promise<EncodedGroup> {
  const blobs: StreamBlob[] = [];
  const rows: unknown[] = [];
  let previous: RecordEnvelope | undefined;
  for (const envelope of envelopes) {
    const row = rowOf(envelopes, envelope, previous);
    const moved = await externalStrings(envelope.data);
    if (moved !== undefined) {
      row.push(new ExtensionScope(moved.data), moved.externals);
      blobs.push(...moved.blobs);
    } else if (envelope.data !== undefined) row.push(new ExtensionScope(envelope.data));
    rows.push(row);
    previous = envelope;
  }
  return { lastSeq: envelopes.at(-1)!.seq, value: packGroup(envelopes, rows), blobs: dedupe(blobs) };
}

/**
 * A group's stored bytes from its rows (each data in an `ExtensionScope`). Plain data (nearly every group) is written
 * by `packPlainDigests` straight from the records' data; anything else by msgpackr from a copy with its digests packed
 * (`packDigests`). Both write the same bytes.
 */
function packGroup(envelopes: readonly RecordEnvelope[], rows: unknown[]): Uint8Array {
  const plain = packPlainDigests([envelopes[0]!.seq, rows], FRAME_HEADER_BYTES);
  if (plain === undefined) {
    const packed = rows.map((row) => (row as unknown[]).map((field) => (field instanceof ExtensionScope ? packDigests(field.value) : field)));
    return encodeFramed(GROUP_RECORD_FORMAT_BYTE, [envelopes[0]!.seq, packed]);
  }
  const stored = Buffer.allocUnsafe(plain.length);
  plain.copy(stored, FRAME_HEADER_BYTES, FRAME_HEADER_BYTES);
  stored[0] = GROUP_RECORD_FORMAT_BYTE;
  stored.writeUInt32BE(crc32(stored.subarray(FRAME_HEADER_BYTES)), 1);
  return stored;
}

/**
 * A row's envelope fields (`[id | nil, type, v, at, actor, cause, corr]`; its data is pushed after): the id nil when it
 * follows the previous row's, the time as a difference, the cause as the index of the row it names in this group.
 */
function rowOf(envelopes: readonly RecordEnvelope[], envelope: RecordEnvelope, previous: RecordEnvelope | undefined): unknown[] {
  return [previous !== undefined && nextId(previous.id) === envelope.id ? null : envelope.id, envelope.type, envelope.v, encodeTime(envelope.at, previous?.at), envelope.actor, causeOf(envelopes, envelope.cause), envelope.corr ?? null];
}

/** A cause as a group stores it: nil, the index of the first row of the group with that id, or the id itself. */
function causeOf(envelopes: readonly RecordEnvelope[], cause: string | undefined): string | number | null {
  if (cause === undefined) return null;
  // A linear search (a group is a step or a few: a handful of rows) instead of a Map of every id per group.
  for (let index = 0; index < envelopes.length; index++) if (envelopes[index]!.id === cause) return index;
  return cause;
}

/**
 * Encodes an append as one group (or groups of at most `MAX_GROUP_RECORDS`), moving long strings to blobs only when the
 * group holds one (the scan for them runs only when it is long enough to). Most appends are encoded without awaiting
 * anything: `encodeAppendNow`.
 */
export async function encodeAppend(envelopes: readonly RecordEnvelope[]): Promise<EncodedGroup[]> {
  if (envelopes.length === 0) return [];
  if (envelopes.length > MAX_GROUP_RECORDS) return encodeGroups(envelopes);
  return [await encodeGroupMovingLongStrings(envelopes)];
}

/**
 * `encodeAppend` for an append of at most `MAX_GROUP_RECORDS` records without long strings, at once (the same bytes);
 * undefined for any other append (then call `encodeAppend`).
 */
export function encodeAppendNow(envelopes: readonly RecordEnvelope[]): EncodedGroup[] | undefined {
  if (envelopes.length === 0) return [];
  if (envelopes.length > MAX_GROUP_RECORDS) return undefined;
  const group = encodeGroupKeepingStrings(envelopes);
  return group === undefined ? undefined : [group];
}

const dedupe = (blobs: readonly StreamBlob[]): StreamBlob[] => [...new Map(blobs.map((blob) => [blob.hex, blob])).values()];

/**
 * The group with its rows' chain fields (`CHAIN_FIELD_BYTES` each, in order) as its third element: the fixarray
 * header of two becomes one of three and a msgpack byte string follows what the two held, so a group encoded before
 * its fields were known (an append computes them in the stream's turn) needs no second encoding. The checksum is
 * written anew.
 */
export function withChainFields(group: EncodedGroup, fields: readonly Uint8Array[]): EncodedGroup {
  const stored = group.value;
  const length = fields.length * CHAIN_FIELD_BYTES;
  if (stored[5] !== 0x92 || fields.some((field) => field.length !== CHAIN_FIELD_BYTES)) throw new Error('not an unchained group, or a malformed chain field');
  const header = length < 0x100 ? 2 : 3;
  const value = Buffer.allocUnsafe(stored.length + header + length);
  value.set(stored, 0);
  value[5] = 0x93;
  let at = stored.length;
  if (header === 2) {
    value[at++] = 0xc4;
    value[at++] = length;
  } else {
    value[at++] = 0xc5;
    value.writeUInt16BE(length, at);
    at += 2;
  }
  for (const field of fields) {
    value.set(field, at);
    at += CHAIN_FIELD_BYTES;
  }
  value[0] = GROUP_RECORD_FORMAT_BYTE;
  value.writeUInt32BE(crc32(value.subarray(5)), 1);
  return { ...group, value };
}

/**
 * Encodes consecutive envelopes with their chain fields (undefined for a record written before the chain): groups of
 * at most `MAX_GROUP_RECORDS`, each chained throughout or not at all (a fork copies a parent's unchained records as
 * they are).
 */
export async function encodeChainedGroups(envelopes: readonly RecordEnvelope[], fields: ReadonlyArray<Uint8Array | undefined>): Promise<EncodedGroup[]> {
  const groups: EncodedGroup[] = [];
  let start = 0;
  while (start < envelopes.length) {
    const chained = fields[start] !== undefined;
    let end = start;
    while (end < envelopes.length && end - start < MAX_GROUP_RECORDS && (fields[end] !== undefined) === chained) end++;
    const group = await encodeGroupMovingLongStrings(envelopes.slice(start, end));
    groups.push(chained ? withChainFields(group, fields.slice(start, end) as Uint8Array[]) : group);
    start = end;
  }
  return groups;
}

/** A record read back from a stored value, with the long strings its data keeps in stream blobs (if any) and its chain field. */
export interface StoredRecord {
  record: RecordEnvelope;
  externals?: ExternalString[];
  /** Its chain field; undefined for a record written before the chain. */
  field?: Uint8Array;
}

const isOptionalString = (value: unknown): value is string | null => value === null || typeof value === 'string';

/**
 * The records a stored value under record key `keySeq` holds: a group's, or the one record of any per-record layout
 * (`decodeStoredRecord`). A group that does not end at `keySeq`, or any malformed row, is `CorruptRecordError`.
 */
export function decodeStoredValue(stored: Uint8Array, stream: string, keySeq: number): StoredRecord[] {
  if (formatByteOf(stored) !== GROUP_RECORD_FORMAT_BYTE) return [decodeStoredRecord(stored, stream, keySeq)];
  const value = decodeFramed(stored, { stream, seq: keySeq }, GROUP_RECORD_FORMAT_BYTE);
  const corrupt = (detail: string) => new CorruptRecordError(stream, keySeq, `stored group ${detail}`);
  if (!Array.isArray(value) || (value.length !== 2 && value.length !== 3) || !Number.isSafeInteger(value[0]) || !Array.isArray(value[1]) || value[1].length === 0) throw corrupt('has the wrong shape');
  const [firstSeq, rows, chain] = value as [number, unknown[], unknown];
  if (value.length === 3 && !(chain instanceof Uint8Array && chain.length === rows.length * CHAIN_FIELD_BYTES)) throw corrupt('has malformed chain fields');
  if (firstSeq + rows.length - 1 !== keySeq) throw corrupt(`holds seqs ${firstSeq}..${firstSeq + rows.length - 1} under the key of ${keySeq}`);
  const records: StoredRecord[] = [];
  const ids: string[] = [];
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index];
    if (!Array.isArray(row) || row.length < 7 || row.length > 9) throw corrupt(`row ${index} has the wrong shape`);
    const [storedId, type, v, storedAt, actor, cause, corr] = row as unknown[];
    const previousId = ids[index - 1];
    const id = storedId === null && previousId !== undefined ? nextId(previousId) : storedId;
    const previousAt = records[index - 1]?.record.at;
    const at = index === 0 ? storedAt : Array.isArray(storedAt) && storedAt.length === 1 ? storedAt[0] : typeof storedAt === 'number' && previousAt !== undefined ? previousAt + storedAt : undefined;
    if (typeof id !== 'string' || typeof type !== 'string' || typeof v !== 'number' || typeof at !== 'number' || typeof actor !== 'string') throw corrupt(`row ${index} has the wrong field types`);
    if (!(isOptionalString(cause) || (Number.isSafeInteger(cause) && (cause as number) >= 0 && (cause as number) < rows.length)) || !isOptionalString(corr)) throw corrupt(`row ${index} has the wrong cause or corr`);
    ids.push(id);
    const record = { stream, seq: firstSeq + index, id, type, v, at, actor } as RecordEnvelope;
    const field = chain === undefined ? undefined : fieldOf((chain as Uint8Array).subarray(index * CHAIN_FIELD_BYTES, (index + 1) * CHAIN_FIELD_BYTES));
    records.push(field === undefined ? { record } : { record, field });
    if (cause !== null) (record as { cause?: unknown }).cause = cause;
    if (corr !== null) record.corr = corr;
    if (row.length >= 8) record.data = row[7];
    if (row.length === 9) {
      const externals = externalsOfRow(row[8]);
      if (externals === undefined) throw corrupt(`row ${index} has malformed externals`);
      records[index]!.externals = externals;
    }
  }
  // Causes given by index name a row of this group: its id, now that every id is known.
  for (const { record } of records) {
    const cause = (record as { cause?: unknown }).cause;
    if (typeof cause === 'number') record.cause = ids[cause]!;
  }
  return records;
}
