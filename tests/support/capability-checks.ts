import type { RecordEnvelope } from '../../models/envelope.js';
import type { CapabilityDiff } from '../../models/capability.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { flattenRecords } from '../../src/host/step-record.js';

/**
 * The root agent's visible set before each of its model calls, folded from the `capability.diff` records alone (in
 * log order): the set in force when each `context.projected` of the root was written.
 */
export const visibleSetsAtEachRound = (records: readonly RecordEnvelope[], actor = 'root'): Array<Set<string>> => {
  const current = new Set<string>();
  const sets: Array<Set<string>> = [];
  for (const record of flattenRecords(records)) {
    if (record.actor !== actor) continue;
    if (record.type === 'capability.diff') {
      const diff = record.data as CapabilityDiff;
      for (const entry of diff.removed) current.delete(entry.name);
      for (const entry of diff.added) current.add(entry.name);
    }
    if (record.type === 'context.projected') sets.push(new Set(current));
  }
  return sets;
};

/** The tool names of every model input an agent was given (from each `context.projected`'s input blob), in order. */
export const modelInputTools = async (store: EventStore, records: readonly RecordEnvelope[], actor = 'root'): Promise<Array<{ seq: number; tools: string[] }>> => {
  const inputs: Array<{ seq: number; tools: string[] }> = [];
  for (const record of flattenRecords(records)) {
    if (record.type !== 'context.projected' || record.actor !== actor) continue;
    const ref = (record.data as { input: string }).input;
    const blob = JSON.parse(Buffer.from(await store.readBlob(record.stream, ref as `artifact://${string}`)).toString('utf8')) as { tools: Array<{ name: string }> };
    inputs.push({ seq: record.seq, tools: blob.tools.map((tool) => tool.name) });
  }
  return inputs;
};
