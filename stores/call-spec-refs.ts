import type { RecordEnvelope } from '../models/envelope.js';

/**
 * Put back the CallSpecs a log stores by reference (`model.responded` v2 `callSpecRef`): in log order, each whole
 * `callSpec` with a `callSpecBase` names its members; a later reference becomes `callSpec: { callId, ...members }`
 * (a new record; the one read is not changed). A reference whose whole spec is not among `records` (a read that
 * starts after it) is left as it is. Records without references are returned as they are, and so is the array when
 * none has one.
 */
export const resolveCallSpecs = (records: readonly RecordEnvelope[]): RecordEnvelope[] => {
  let bases: Map<string, Record<string, unknown>> | undefined;
  let resolved: RecordEnvelope[] | undefined;
  for (let index = 0; index < records.length; index++) {
    const record = records[index]!;
    if (record.type !== 'model.responded') continue;
    const data = record.data as { callSpec?: Record<string, unknown>; callSpecBase?: unknown; callSpecRef?: { callId?: unknown; base?: unknown } } | undefined;
    if (data === undefined || data === null) continue;
    if (data.callSpec !== undefined && typeof data.callSpecBase === 'string') {
      const { callId: _callId, ...members } = data.callSpec;
      (bases ??= new Map()).set(data.callSpecBase, members);
      continue;
    }
    const ref = data.callSpecRef;
    if (ref === undefined || typeof ref !== 'object' || ref === null || typeof ref.base !== 'string') continue;
    const members = bases?.get(ref.base);
    if (members === undefined) continue;
    const { callSpecRef: _ref, ...rest } = data;
    resolved ??= records.slice();
    resolved[index] = { ...record, data: { ...rest, callSpec: { callId: ref.callId, ...members } } };
  }
  return resolved ?? (records as RecordEnvelope[]);
};
