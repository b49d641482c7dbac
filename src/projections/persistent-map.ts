/**
 * An immutable string-keyed map (a hash array mapped trie, 32-way, path copying): `set` copies one path of at most
 * seven 32-slot nodes and shares everything else, so updating a view's map costs the same at 10 entries and at a
 * million. Iteration order follows the key hashes (deterministic for the same history).
 */
type Slot<V> = Branch<V> | Leaf<V> | undefined;
interface Branch<V> {
  readonly kind: 'branch';
  readonly slots: readonly Slot<V>[];
}
interface Leaf<V> {
  readonly kind: 'leaf';
  readonly hash: number;
  readonly entries: ReadonlyArray<readonly [string, V]>;
}

export interface PersistentMap<V> {
  readonly size: number;
  readonly root: Branch<V>;
}

/**
 * The maps `emptyMap`, `setIn` and `removeIn` make: the trie, and — for `JSON.stringify` — plain data, an object of
 * its entries by key (a view that holds maps serialises as documented, not as its trie). `toJSON` is a method
 * (not an own property), so structural comparisons see only `size` and `root`.
 */
class TrieMap<V> implements PersistentMap<V> {
  constructor(
    readonly size: number,
    readonly root: Branch<V>,
  ) {}

  toJSON(): Record<string, V> {
    const plain: Record<string, V> = {};
    collect(this.root, [], ([key, value]) => {
      plain[key] = value;
    });
    return plain;
  }
}

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
const MAX_SHIFT = 30;

/** FNV-1a over UTF-16 code units, as an unsigned 32-bit integer. */
const hashOf = (key: string): number => {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  return hash >>> 0;
};

const emptyBranch: Branch<never> = { kind: 'branch', slots: new Array(WIDTH).fill(undefined) };

/** The empty map. */
export const emptyMap = <V>(): PersistentMap<V> => new TrieMap<V>(0, emptyBranch);

/** The value stored under `key`, if any. */
export const getIn = <V>(map: PersistentMap<V>, key: string): V | undefined => {
  const hash = hashOf(key);
  let node: Slot<V> = map.root;
  for (let shift = 0; node; shift += BITS) {
    if (node.kind === 'leaf') return node.hash === hash ? node.entries.find(([entryKey]) => entryKey === key)?.[1] : undefined;
    node = node.slots[(hash >>> shift) & MASK];
  }
  return undefined;
};

const withSlot = <V>(branch: Branch<V>, index: number, slot: Slot<V>): Branch<V> => {
  const slots = branch.slots.slice();
  slots[index] = slot;
  return { kind: 'branch', slots };
};

const split = <V>(existing: Leaf<V>, added: Leaf<V>, shift: number): Slot<V> => {
  if (shift > MAX_SHIFT) return { kind: 'leaf', hash: existing.hash, entries: [...existing.entries, ...added.entries] };
  const left = (existing.hash >>> shift) & MASK;
  const right = (added.hash >>> shift) & MASK;
  if (left === right) return withSlot(emptyBranch as Branch<V>, left, split(existing, added, shift + BITS));
  return withSlot(withSlot(emptyBranch as Branch<V>, left, existing), right, added);
};

const insert = <V>(node: Branch<V>, hash: number, key: string, value: V, shift: number): { node: Branch<V>; added: boolean } => {
  const index = (hash >>> shift) & MASK;
  const slot = node.slots[index];
  if (slot === undefined) return { node: withSlot(node, index, { kind: 'leaf', hash, entries: [[key, value]] }), added: true };
  if (slot.kind === 'branch') {
    const inner = insert(slot, hash, key, value, shift + BITS);
    return { node: withSlot(node, index, inner.node), added: inner.added };
  }
  if (slot.hash === hash) {
    const at = slot.entries.findIndex(([entryKey]) => entryKey === key);
    const entries = slot.entries.slice();
    if (at >= 0) entries[at] = [key, value];
    else entries.push([key, value]);
    return { node: withSlot(node, index, { kind: 'leaf', hash, entries }), added: at < 0 };
  }
  return { node: withSlot(node, index, split(slot, { kind: 'leaf', hash, entries: [[key, value]] }, shift + BITS)), added: true };
};

/** A new map with `key` set to `value`; `map` is unchanged and shares every untouched node. */
export const setIn = <V>(map: PersistentMap<V>, key: string, value: V): PersistentMap<V> => {
  const { node, added } = insert(map.root, hashOf(key), key, value, 0);
  return new TrieMap(map.size + (added ? 1 : 0), node);
};

const remove = <V>(node: Branch<V>, hash: number, key: string, shift: number): Branch<V> | undefined => {
  const index = (hash >>> shift) & MASK;
  const slot = node.slots[index];
  if (slot === undefined) return undefined;
  if (slot.kind === 'branch') {
    const inner = remove(slot, hash, key, shift + BITS);
    if (!inner) return undefined;
    return withSlot(node, index, inner.slots.every((entry) => entry === undefined) ? undefined : inner);
  }
  const at = slot.hash === hash ? slot.entries.findIndex(([entryKey]) => entryKey === key) : -1;
  if (at < 0) return undefined;
  const entries = slot.entries.filter((_, position) => position !== at);
  return withSlot(node, index, entries.length === 0 ? undefined : { kind: 'leaf', hash, entries });
};

/**
 * A new map without `key` (the same map when it is absent); emptied branches are dropped, so a map that keeps only
 * what is live (open spans, pending approvals) stays as small as what it holds.
 */
export const removeIn = <V>(map: PersistentMap<V>, key: string): PersistentMap<V> => {
  const root = remove(map.root, hashOf(key), key, 0);
  return root ? new TrieMap(map.size - 1, root) : map;
};

const collect = <V, T>(node: Slot<V>, out: T[], pick: (entry: readonly [string, V]) => T): void => {
  if (node === undefined) return;
  if (node.kind === 'leaf') {
    for (const entry of node.entries) out.push(pick(entry));
    return;
  }
  for (const slot of node.slots) if (slot !== undefined) collect(slot, out, pick);
};

/** Every `[key, value]` (O(n), depth first in slot order); for reading a finished view, not for per-record work. */
export function* entriesOf<V>(map: PersistentMap<V>): Generator<readonly [string, V]> {
  const entries: Array<readonly [string, V]> = [];
  collect(map.root, entries, (entry) => entry);
  yield* entries;
}

/** Every value, in `entriesOf` order. */
export const valuesOf = <V>(map: PersistentMap<V>): V[] => {
  const values: V[] = [];
  collect(map.root, values, ([, value]) => value);
  return values;
};

/**
 * A persistent map behind the read side of `Map` (`get`, `has`, `size`, iteration), for views whose readers expect a
 * `ReadonlyMap`: `set` and `delete` return a new map sharing all but one path with this one.
 */
export class PersistentReadonlyMap<V> implements ReadonlyMap<string, V> {
  static empty<V>(): PersistentReadonlyMap<V> {
    return new PersistentReadonlyMap<V>(emptyMap<V>());
  }

  private constructor(readonly map: PersistentMap<V>) {}

  /** Plain data for `JSON.stringify`: an object of the entries by key. */
  toJSON(): Record<string, V> {
    return Object.fromEntries(entriesOf(this.map));
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return getIn(this.map, key);
  }

  has(key: string): boolean {
    return getIn(this.map, key) !== undefined;
  }

  set(key: string, value: V): PersistentReadonlyMap<V> {
    return new PersistentReadonlyMap(setIn(this.map, key, value));
  }

  delete(key: string): PersistentReadonlyMap<V> {
    const map = removeIn(this.map, key);
    return map === this.map ? this : new PersistentReadonlyMap(map);
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of entriesOf(this.map)) callback(value, key, this);
  }

  *entries(): MapIterator<[string, V]> {
    for (const [key, value] of entriesOf(this.map)) yield [key, value];
  }

  *keys(): MapIterator<string> {
    for (const [key] of entriesOf(this.map)) yield key;
  }

  *values(): MapIterator<V> {
    yield* valuesOf(this.map);
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}
