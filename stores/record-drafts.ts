import type { RecordDraft, RecordEnvelope } from '../models/envelope.js';
import { RECORD_TYPE_PATTERN } from '../models/envelope-rules.js';
import { COMPACT_RECORD_FORMAT_BYTE, RECORD_FORMAT_BYTE, decodeFramed, encodeFramed, formatByteOf } from './record-codec.js';
import { CorruptRecordError, StoreError } from './store-errors.js';

/** A batch ready to write: the envelopes the append returns and their stored bytes, index for index. */
export interface PreparedBatch {
  envelopes: RecordEnvelope[];
  values: Uint8Array[];
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const isOptionalText = (value: unknown): boolean => value === undefined || typeof value === 'string';

/**
 * The `RecordEnvelope` rules for the draft's fields, checked by hand (this runs for every appended record): the name
 * of the first field that breaks them, or undefined for a valid draft. tests/stores/record-drafts.prop.test.ts keeps
 * this equal to the zod schema.
 */
function invalidField(draft: RecordDraft): string | undefined {
  if (typeof draft !== 'object' || draft === null) return 'the draft is not an object';
  if (!isText(draft.id)) return 'id must be a non-empty string';
  if (typeof draft.type !== 'string' || !RECORD_TYPE_PATTERN.test(draft.type)) return 'type must be <noun>.<verb> in lower case';
  if (!Number.isSafeInteger(draft.v) || draft.v < 1) return 'v must be an integer ≥ 1';
  if (!Number.isFinite(draft.at)) return 'at must be a finite number';
  if (!isText(draft.actor)) return 'actor must be a non-empty string';
  if (!isOptionalText(draft.cause)) return 'cause must be a string when present';
  if (!isOptionalText(draft.corr)) return 'corr must be a string when present';
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
 * How a record is laid out in its stored value: `compact` (codec `/2`, the default) is a positional array without the
 * stream; `envelope` (codec `/1`) is the whole envelope map, kept for streams an earlier build created.
 */
export type RecordLayout = 'compact' | 'envelope';

/** The stored bytes of one envelope in the given layout (`STORE_INVALID_ARGUMENT` when it cannot be encoded). */
export function encodeRecord(envelope: RecordEnvelope, layout: RecordLayout = 'compact'): Uint8Array {
  if (layout === 'envelope') return encodeFramed(RECORD_FORMAT_BYTE, envelope);
  const row: unknown[] = [envelope.seq, envelope.id, envelope.type, envelope.v, envelope.at, envelope.actor, envelope.cause ?? null, envelope.corr ?? null];
  if (envelope.data !== undefined) row.push(envelope.data);
  return encodeFramed(COMPACT_RECORD_FORMAT_BYTE, row);
}

/**
 * Validates drafts against the `RecordEnvelope` rules, assigns `stream` and seqs `firstSeq, firstSeq + 1, …`, and
 * encodes them (in `layout`). Unknown draft keys are dropped. Any invalid or unencodable draft rejects the whole batch
 * with `STORE_INVALID_ARGUMENT`, before anything is written.
 */
export function prepareBatch(stream: string, firstSeq: number, drafts: readonly RecordDraft[], layout: RecordLayout = 'compact'): PreparedBatch {
  if (!Array.isArray(drafts)) throw new StoreError('STORE_INVALID_ARGUMENT', 'records must be an array');
  const envelopes: RecordEnvelope[] = new Array(drafts.length);
  const values: Uint8Array[] = new Array(drafts.length);
  for (let index = 0; index < drafts.length; index++) {
    const draft = drafts[index]!;
    const seq = firstSeq + index;
    const invalid = invalidField(draft);
    if (invalid !== undefined) throw new StoreError('STORE_INVALID_ARGUMENT', `record ${index} of the batch is invalid: ${invalid}`);
    const envelope = toEnvelope(stream, seq, draft);
    envelopes[index] = envelope;
    values[index] = encodeRecord(envelope, layout);
  }
  return { envelopes, values };
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

/**
 * Decodes a stored record in either layout (the format byte says which); anything that is not an envelope is
 * `CorruptRecordError`. The compact layout takes its stream from `stream`, the database it was read from.
 */
export function decodeRecord(stored: Uint8Array, stream: string, seq: number): RecordEnvelope {
  if (formatByteOf(stored) === COMPACT_RECORD_FORMAT_BYTE) {
    const envelope = envelopeOfRow(stream, decodeFramed(stored, { stream, seq }, COMPACT_RECORD_FORMAT_BYTE));
    if (envelope === undefined) throw new CorruptRecordError(stream, seq, 'stored value is not a record row');
    return envelope;
  }
  const value = decodeFramed(stored, { stream, seq }, RECORD_FORMAT_BYTE);
  if (typeof value !== 'object' || value === null || typeof (value as { seq?: unknown }).seq !== 'number') {
    throw new CorruptRecordError(stream, seq, 'stored value is not a record envelope');
  }
  return value as RecordEnvelope;
}
