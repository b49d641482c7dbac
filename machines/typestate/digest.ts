import { blake3Text } from './blake3.js';
import { canonicalJson } from './canonical-json.js';

/** The typestate digest of a value: `b3:` + BLAKE3 of its canonical JSON. */
export const digestOf = (value: unknown): string => `b3:${blake3Text(canonicalJson(value))}`;

/** An order-insensitive digest of a multiset: the digest of the sorted member digests (duplicates kept). */
export const multisetDigest = (members: readonly unknown[]): string => digestOf(members.map((member) => digestOf(member)).sort());

const rowsDigests = new WeakMap<readonly unknown[], string>();

/**
 * `multisetDigest` of a machine context's row list, computed once per list: a turn digests its requests, results and
 * uses in their witnesses and again in the join digest, and a context's lists are replaced, never changed in place
 * (XState contexts are immutable), so the same array always has the same digest. Only for such lists.
 */
export const rowsDigest = (rows: readonly unknown[]): string => {
  let digest = rowsDigests.get(rows);
  if (digest === undefined) {
    digest = multisetDigest(rows);
    rowsDigests.set(rows, digest);
  }
  return digest;
};

const valueDigests = new WeakMap<object, string>();

/**
 * `digestOf` a value that is never changed once made (a tool's JSON Schema, shared by every session of a process),
 * computed once per object. Only for such values.
 */
export const sharedDigestOf = (value: object): string => {
  let digest = valueDigests.get(value);
  if (digest === undefined) {
    digest = digestOf(value);
    valueDigests.set(value, digest);
  }
  return digest;
};
