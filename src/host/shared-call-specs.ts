import type { CallSpec } from '../../models/call-spec.js';
import type { RecordDraft } from '../../models/envelope.js';
import { callSpecBaseOf } from '../typestate/call-spec.js';

/**
 * What the log stores of a `model.responded` (v2): its CallSpec whole, with `callSpecBase` naming its members, the
 * first time this writer stores a spec with those members; after that `callSpecRef: { callId, base }` in its place
 * (the ~1.2 KB spec a delegation's every child repeats, stored once). `written` holds the bases this writer stored
 * whole in the stream; a writer on a resumed stream starts empty (it stores the next spec whole again), so a reference
 * always follows its whole spec in the log, which is the order `resolveCallSpecs` reads it in. The machines get the
 * record as it came; any other record is returned as it is.
 */
export const storedInput = (record: RecordDraft, written: Set<string>): RecordDraft => {
  if (record.type !== 'model.responded') return record;
  const data = record.data as { callSpec?: CallSpec } | undefined;
  const spec = data?.callSpec;
  if (spec === undefined) return record;
  const base = callSpecBaseOf(spec);
  if (!written.has(base)) {
    written.add(base);
    return { ...record, data: { ...data, callSpecBase: base } };
  }
  const { callSpec: _spec, ...rest } = data as Record<string, unknown>;
  return { ...record, data: { ...rest, callSpecRef: { callId: spec.callId, base } } };
};
