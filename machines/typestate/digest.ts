import { blake3Prefix, blake3Text } from './blake3.js';
import { canonicalJsonBytes } from './canonical-json.js';

/**
 * The typestate digest of a value: `b3:` + BLAKE3 of its canonical JSON (`canonicalJson`), whose UTF-8 bytes are
 * written straight into a buffer and hashed there (`canonicalJsonBytes`: no string built).
 */
export const digestOf = (value: unknown): string => {
  const { bytes, length } = canonicalJsonBytes(value);
  return `b3:${blake3Prefix(bytes, length)}`;
};

/**
 * An order-insensitive digest of a multiset: the digest of the sorted member digests (duplicates kept). The sorted
 * list's canonical JSON is written directly: a member digest (`b3:` and hex) never needs escaping.
 */
export const multisetDigest = (members: readonly unknown[]): string => {
  const digests = new Array<string>(members.length);
  for (let index = 0; index < members.length; index++) digests[index] = digestOf(members[index]);
  if (digests.length > 1) digests.sort();
  return `b3:${blake3Text(digests.length === 0 ? '[]' : `["${digests.join('","')}"]`)}`;
};

/** How many of the latest row lists `rowsDigest` remembers. */
const RECENT_ROWS = 16;
const recentRows = new Array<readonly unknown[] | undefined>(RECENT_ROWS).fill(undefined);
const recentDigests = new Array<string>(RECENT_ROWS).fill('');
let nextRecent = 0;

/**
 * `multisetDigest` of a machine context's row list, computed once per list while it is recent: a turn digests its
 * requests, results and uses in their witnesses and again in the join digest a few transitions later, and a context's
 * lists are replaced, never changed in place (XState contexts are immutable), so the same array always has the same
 * digest. Only for such lists. The last few lists are remembered by identity (a scan of a small ring: a WeakMap's
 * insertion cost more than the digest it saved); a list that fell out is digested again, to the same value.
 */
export const rowsDigest = (rows: readonly unknown[]): string => {
  for (let index = 0; index < RECENT_ROWS; index++) if (recentRows[index] === rows) return recentDigests[index]!;
  const digest = multisetDigest(rows);
  recentRows[nextRecent] = rows;
  recentDigests[nextRecent] = digest;
  nextRecent = (nextRecent + 1) % RECENT_ROWS;
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
