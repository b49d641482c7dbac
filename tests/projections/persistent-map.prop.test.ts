import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyMap, entriesOf, getIn, removeIn, setIn, type PersistentMap } from '../../src/projections/persistent-map.js';
import { newest, prepend, toArray, type PersistentList } from '../../src/projections/persistent-list.js';
import { propertyRuns } from '../support/temp-dir.js';

describe('persistent structures', () => {
  it('the map behaves like a Map, and every earlier version stays unchanged', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 300 }), (operations) => {
        const model = new Map<string, number>();
        const versions: Array<{ map: PersistentMap<number>; snapshot: Map<string, number> }> = [];
        let map = emptyMap<number>();
        for (const [key, value] of operations) {
          map = setIn(map, key, value);
          model.set(key, value);
          versions.push({ map, snapshot: new Map(model) });
        }
        expect(map.size).toBe(model.size);
        for (const [key, value] of model) expect(getIn(map, key)).toBe(value);
        expect(new Map(entriesOf(map))).toEqual(model);
        expect(getIn(map, '\u0000absent')).toBeUndefined();
        for (const version of versions) expect(new Map(entriesOf(version.map))).toEqual(version.snapshot);
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('removal behaves like Map.delete, shares the rest and drops emptied branches', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.constantFrom('a', 'b', 'c', 'd', 'key-1', 'key-2', ''), fc.integer()), { maxLength: 300 }), (operations) => {
        const model = new Map<string, number>();
        let map = emptyMap<number>();
        for (const [add, key, value] of operations) {
          const before = map;
          if (add) {
            map = setIn(map, key, value);
            model.set(key, value);
          } else {
            const had = model.delete(key);
            map = removeIn(map, key);
            if (!had) expect(map).toBe(before);
            expect(getIn(before, key)).toBe(had ? getIn(before, key) : undefined);
          }
          expect(map.size).toBe(model.size);
        }
        expect(new Map(entriesOf(map))).toEqual(model);
        for (const key of model.keys()) map = removeIn(map, key);
        expect(map.size).toBe(0);
        expect(map.root.slots.every((slot) => slot === undefined)).toBe(true);
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('keys whose hashes collide in every level still resolve', () => {
    let map = emptyMap<number>();
    const keys = Array.from({ length: 5_000 }, (_, index) => `key-${index}`);
    keys.forEach((key, index) => (map = setIn(map, key, index)));
    keys.forEach((key, index) => expect(getIn(map, key)).toBe(index));
    expect(map.size).toBe(keys.length);
  });

  it('the list shares its tail and reads newest first', () => {
    let list: PersistentList<number> | undefined;
    for (let index = 1; index <= 5; index++) list = prepend(list, index);
    const longer = prepend(list, 6);
    expect(longer.rest).toBe(list);
    expect(toArray(list)).toEqual([1, 2, 3, 4, 5]);
    expect(newest(longer, 2)).toEqual([6, 5]);
  });
});
