import type { RecordEnvelope } from '../models/envelope.js';

/**
 * A resolver of the CallSpecs a log stores by reference (`model.responded` v2 `callSpecRef`), fed the log's records
 * in order from its start — read or live (`session.records(1)`): each record comes back with its CallSpec whole. A
 * whole `callSpec` with a `callSpecBase` names its members; a later reference becomes `callSpec: { callId,
 * ...members }` (a new record; the one given is not changed). A reference whose whole spec it has not been given (a
 * feed that starts after it) and every other record come back as they are. Holds one entry per distinct spec.
 */
export const createCallSpecResolver = (): (<R extends RecordEnvelope>(record: R) => R) => {
  let bases: Map<string, Record<string, unknown>> | undefined;
  return <R extends RecordEnvelope>(record: R): R => {
    if (record.type !== 'model.responded') return record;
    const data = record.data as { callSpec?: Record<string, unknown>; callSpecBase?: unknown; callSpecRef?: { callId?: unknown; base?: unknown } } | undefined;
    if (data === undefined || data === null) return record;
    if (data.callSpec !== undefined && typeof data.callSpecBase === 'string') {
      const { callId: _callId, ...members } = data.callSpec;
      (bases ??= new Map()).set(data.callSpecBase, members);
      return record;
    }
    const ref = data.callSpecRef;
    if (ref === undefined || typeof ref !== 'object' || ref === null || typeof ref.base !== 'string') return record;
    const members = bases?.get(ref.base);
    if (members === undefined) return record;
    const { callSpecRef: _ref, ...rest } = data;
    return { ...record, data: { ...rest, callSpec: { callId: ref.callId, ...members } } } as R;
  };
};

/**
 * Put back the CallSpecs a log stores by reference (`model.responded` v2 `callSpecRef`) in `records`, read in log
 * order (`createCallSpecResolver`). A reference whose whole spec is not among `records` (a read that starts after it)
 * is left as it is. Records without references are returned as they are, and so is the array when none has one.
 */
export const resolveCallSpecs = (records: readonly RecordEnvelope[]): RecordEnvelope[] => {
  const resolve = createCallSpecResolver();
  let resolved: RecordEnvelope[] | undefined;
  for (let index = 0; index < records.length; index++) {
    const record = records[index]!;
    const whole = resolve(record);
    if (whole === record) continue;
    resolved ??= records.slice();
    resolved[index] = whole;
  }
  return resolved ?? (records as RecordEnvelope[]);
};
