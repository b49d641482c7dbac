import type { RecordDraft, RecordEnvelope } from '../models/envelope.js';
import { RECORD_TYPE_PATTERN } from '../models/envelope-rules.js';
import { decodeValue, encodeValue } from './record-codec.js';
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
 * Validates drafts against the `RecordEnvelope` rules, assigns `stream` and seqs `firstSeq, firstSeq + 1, …`, and
 * encodes them. Unknown draft keys are dropped. Any invalid or unencodable draft rejects the whole batch with
 * `STORE_INVALID_ARGUMENT`, before anything is written.
 */
export function prepareBatch(stream: string, firstSeq: number, drafts: readonly RecordDraft[]): PreparedBatch {
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
    values[index] = encodeValue(envelope);
  }
  return { envelopes, values };
}

/** Decodes a stored record; anything that is not an envelope-shaped object is `CorruptRecordError`. */
export function decodeRecord(stored: Uint8Array, stream: string, seq: number): RecordEnvelope {
  const value = decodeValue(stored, { stream, seq });
  if (typeof value !== 'object' || value === null || typeof (value as { seq?: unknown }).seq !== 'number') {
    throw new CorruptRecordError(stream, seq, 'stored value is not a record envelope');
  }
  return value as RecordEnvelope;
}
