import type { RecordEnvelope } from '../models/envelope.js';
import { isRecordType, recordVersion } from '../models/records.js';
import { StoreError } from './store-errors.js';
import { resolveCallSpecs } from './call-spec-refs.js';

/** Turns the data of one record type from `from` to `from + 1`. Pure; never edits the stored bytes. */
export interface UpcastStep {
  type: string;
  from: number;
  up(data: unknown): unknown;
}

/**
 * Every schema change ever made to a stored record type, oldest first. A type whose `v` rises gets a step here,
 * so logs written by any earlier release stay readable forever; the version rise itself makes an older build refuse
 * the newer record (`STORE_VERSION_UNSUPPORTED`) instead of misreading it.
 */
export const upcastSteps: readonly UpcastStep[] = [
  // model.attempted v2: the decision `fallback` and `fallbackTo` were added; every v1 record is a valid v2 record.
  { type: 'model.attempted', from: 1, up: (data) => data },
  // context.projected v2: the ledger's lists became optional (a v2 record keeps their sizes); every v1 record is a
  // valid v2 record.
  { type: 'context.projected', from: 1, up: (data) => data },
  // model.responded v2: a CallSpec whose members the stream already holds may be stored as `callSpecRef` (resolved by
  // `upcastRecords`, see `resolveCallSpecs`); every v1 record (its spec whole) is a valid v2 record.
  { type: 'model.responded', from: 1, up: (data) => data },
  // step.derived v2: a capability.diff entry equal but for its effectId to an earlier one of the same record may be
  // stored as `{ effectId, sameAs }` (put back by `resolveEntry` wherever entries are read); every v1 record (each diff
  // whole) is a valid v2 record.
  { type: 'step.derived', from: 1, up: (data) => data },
];

/** Raised for a record newer than this build understands (written by a later release). */
export class UnsupportedVersionError extends StoreError {
  constructor(record: Pick<RecordEnvelope, 'stream' | 'seq' | 'type' | 'v'>, current: number) {
    super('STORE_VERSION_UNSUPPORTED', `${record.type} v${record.v} at ${record.stream}#${record.seq} is newer than this build (v${current})`);
    this.name = 'UnsupportedVersionError';
  }
}

/**
 * Build an upcaster: records are lifted step by step to the current version of their type; known types from a
 * future version are refused with `STORE_VERSION_UNSUPPORTED`; unknown types pass through untouched.
 */
export const createUpcaster = (steps: readonly UpcastStep[] = upcastSteps, currentVersion: (type: string) => number = recordVersion) => {
  const byKey = new Map(steps.map((step) => [`${step.type}@${step.from}`, step]));
  return (record: RecordEnvelope): RecordEnvelope => {
    if (!isRecordType(record.type) && !steps.some((step) => step.type === record.type)) return record;
    const current = currentVersion(record.type);
    if (record.v > current) throw new UnsupportedVersionError(record, current);
    let lifted = record;
    while (lifted.v < current) {
      const step = byKey.get(`${lifted.type}@${lifted.v}`);
      if (!step) throw new UnsupportedVersionError({ ...lifted, v: lifted.v }, current);
      lifted = { ...lifted, v: lifted.v + 1, data: step.up(lifted.data) };
    }
    return lifted;
  };
};

/** Lift every record read from a store to the current schema versions, its CallSpecs whole (`resolveCallSpecs`). */
export const upcastRecords = (records: readonly RecordEnvelope[], upcast = createUpcaster()): RecordEnvelope[] => resolveCallSpecs(records.map(upcast));
