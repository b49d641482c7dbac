import { RecordEnvelope } from '../models/envelope.js';
import type { RecordDraft } from '../models/envelope.js';
import { decodeValue, encodeValue } from './record-codec.js';
import { CorruptRecordError, StoreError } from './store-errors.js';

/** A batch ready to write: the envelopes the append returns and their stored bytes, index for index. */
export interface PreparedBatch {
  envelopes: RecordEnvelope[];
  values: Uint8Array[];
}

/** Mirrors `RecordEnvelope.shape.type` in models/envelope.ts (kept equal by tests/stores/record-drafts.prop.test.ts). */
const TYPE_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const isOptionalText = (value: unknown): boolean => value === undefined || typeof value === 'string';

/** The `RecordEnvelope` rules for the draft's fields, checked by hand: this runs for every appended record. */
function isValidDraft(draft: RecordDraft): boolean {
  return (
    typeof draft === 'object' &&
    draft !== null &&
    isText(draft.id) &&
    typeof draft.type === 'string' &&
    TYPE_PATTERN.test(draft.type) &&
    Number.isSafeInteger(draft.v) &&
    draft.v >= 1 &&
    Number.isFinite(draft.at) &&
    isText(draft.actor) &&
    isOptionalText(draft.cause) &&
    isOptionalText(draft.corr)
  );
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

function invalidDraft(index: number, stream: string, seq: number, draft: RecordDraft): StoreError {
  const parsed = RecordEnvelope.safeParse(typeof draft === 'object' && draft !== null ? { ...draft, stream, seq } : draft);
  const detail = parsed.success ? 'it breaks the envelope rules' : parsed.error.message;
  return new StoreError('STORE_INVALID_ARGUMENT', `record ${index} of the batch is invalid: ${detail}`, {
    cause: parsed.success ? undefined : parsed.error,
  });
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
    if (!isValidDraft(draft)) throw invalidDraft(index, stream, seq, draft);
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
