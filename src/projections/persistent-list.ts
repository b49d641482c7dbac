/**
 * An immutable singly linked list, newest first: `prepend` is O(1) and shares the whole older list, so a view can
 * keep an ever-growing history without copying it per record.
 */
export interface PersistentList<T> {
  readonly head: T;
  readonly rest: PersistentList<T> | undefined;
  readonly size: number;
}

/** A new list with `value` in front of `list` (which is shared, not copied). */
export const prepend = <T>(list: PersistentList<T> | undefined, value: T): PersistentList<T> => ({ head: value, rest: list, size: (list?.size ?? 0) + 1 });

/** The list with its head replaced (O(1)); an empty list stays empty. */
export const replaceHead = <T>(list: PersistentList<T> | undefined, value: T): PersistentList<T> | undefined =>
  list === undefined ? undefined : { head: value, rest: list.rest, size: list.size };

/** The values oldest first (O(n)); for reading a finished view, not for per-record work. */
export const toArray = <T>(list: PersistentList<T> | undefined): T[] => {
  const values: T[] = new Array(list?.size ?? 0);
  let index = values.length - 1;
  for (let node = list; node; node = node.rest) values[index--] = node.head;
  return values;
};

/** Up to `count` values, newest first, without walking the rest of the list. */
export const newest = <T>(list: PersistentList<T> | undefined, count: number): T[] => {
  const values: T[] = [];
  for (let node = list; node && values.length < count; node = node.rest) values.push(node.head);
  return values;
};
