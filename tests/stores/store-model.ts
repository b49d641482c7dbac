import fc from 'fast-check';
import { expect } from 'vitest';
import type { EventStore } from '../../stores/event-store.js';
import { draft } from './store-test-support.js';

export const runs = Number(process.env.FC_RUNS ?? 50);
const streamNames = ['a', 'b', 'c'] as const;

type Operation =
  | { kind: 'append'; stream: string; size: number; skew: number }
  | { kind: 'race'; stream: string; sizes: [number, number] }
  | { kind: 'read'; stream: string; from?: number; to?: number; limit?: number; reverse: boolean };

const stream = fc.constantFrom(...streamNames);
const bound = fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined });
export const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), stream, size: fc.integer({ min: 0, max: 4 }), skew: fc.constantFrom(0, 0, 0, -1, 1) }),
  fc.record({ kind: fc.constant('race' as const), stream, sizes: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })) }),
  fc.record({ kind: fc.constant('read' as const), stream, from: bound, to: bound, limit: bound, reverse: fc.boolean() }),
);

/** The model: per stream, the ids of its records in seq order (seq = index + 1). */
function expectedRead(ids: string[], read: Extract<Operation, { kind: 'read' }>): [number, string][] {
  let records = ids
    .map((id, index): [number, string] => [index + 1, id])
    .filter(([seq]) => seq >= (read.from ?? 1) && seq <= (read.to ?? Number.POSITIVE_INFINITY));
  if (read.reverse) records = records.reverse();
  return read.limit === undefined ? records : records.slice(0, read.limit);
}

/**
 * Run `operations` against `store` and an array model: appends and races must succeed or conflict as the model says,
 * reads return the model's records, and (for stores with a global order) `readAll` returns every acknowledged record
 * in the order the appends were acknowledged.
 */
export async function check(store: EventStore, operations: Operation[]): Promise<void> {
  const model = new Map<string, string[]>(streamNames.map((name) => [name, []]));
  const acknowledged: string[] = [];
  let nextId = 0;
  const batch = (size: number) => Array.from({ length: size }, () => draft(++nextId));
  for (const step of operations) {
    const ids = model.get(step.stream)!;
    if (step.kind === 'append') {
      const expectedSeq = Math.max(0, ids.length + step.skew);
      const records = batch(step.size);
      const result = store.append(step.stream, records, { expectedSeq });
      if (expectedSeq === ids.length) {
        expect((await result).map((record) => record.seq)).toEqual(records.map((_, index) => ids.length + index + 1));
        ids.push(...records.map((record) => record.id));
        acknowledged.push(...records.map((record) => record.id));
      } else {
        await expect(result).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
      }
    } else if (step.kind === 'race') {
      const contenders = step.sizes.map((size) => batch(size));
      const results = await Promise.allSettled(contenders.map((records) => store.append(step.stream, records, { expectedSeq: ids.length })));
      const winners = results.flatMap((result, index) => (result.status === 'fulfilled' ? [contenders[index]!] : []));
      expect(winners).toHaveLength(1);
      ids.push(...winners[0]!.map((record) => record.id));
      acknowledged.push(...winners[0]!.map((record) => record.id));
    } else {
      const records = await store.read(step.stream, { from: step.from, to: step.to, limit: step.limit, reverse: step.reverse });
      expect(records.map((record) => [record.seq, record.id])).toEqual(expectedRead(ids, step));
    }
    expect(await store.head(step.stream)).toBe(ids.length);
  }
  for (const [name, ids] of model) expect((await store.read(name)).map((record) => record.id)).toEqual(ids);
  const everything = await store.readAll({ limit: 10_000 });
  const all = everything.map((entry) => entry.record.id);
  if (store.capabilities.globalOrder) expect(all).toEqual(acknowledged);
  else expect([...all].sort()).toEqual([...acknowledged].sort());
}

