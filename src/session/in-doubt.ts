import type { RecordEnvelope } from '../../models/envelope.js';
import type { EffectKind } from '../../models/effect.records.js';
import { recordClassOf } from '../../models/records.js';
import type { MachineTree } from '../host/machine-tree.js';
import { requestsOf } from '../host/step-record.js';

/** An effect that was requested (durably) but never settled: its outcome is unknown to the log. */
export interface InDoubtEffect {
  effectId: string;
  kind: EffectKind;
  record: RecordEnvelope;
}

/**
 * Find every effect whose request (an intent of a step record, or a legacy `effect.requested`) has no settling input
 * record (any input carrying its
 * `effectId`), limited to effects their actor (the root agent, a child agent, a delegation's timer) is still running
 * and still counts as outstanding: the effects of an actor that ended or was stopped are never resumed.
 */
export const findInDoubt = (records: readonly RecordEnvelope[], tree: MachineTree): InDoubtEffect[] => {
  const requested = new Map<string, RecordEnvelope>();
  for (const record of records) {
    if (record.type === 'effect.requested' || record.type === 'step.derived') {
      // A step record's intents, each as its `effect.requested` (the step record's id: its settlement's cause).
      for (const request of requestsOf(record)) requested.set((request.data as { effectId: string }).effectId, request);
    } else if (recordClassOf(record.type) === 'input') {
      const effectId = (record.data as { effectId?: unknown }).effectId;
      if (typeof effectId === 'string') requested.delete(effectId);
    }
  }
  return [...requested.values()]
    .filter((record) => tree.isOutstanding(record.actor, (record.data as { effectId: string }).effectId))
    .map((record) => {
      const data = record.data as { effectId: string; kind: EffectKind };
      return { effectId: data.effectId, kind: data.kind, record };
    });
};
