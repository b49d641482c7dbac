import { blake3Text } from './blake3.js';
import { canonicalJson } from './canonical-json.js';

/** The typestate digest of a value: `b3:` + BLAKE3 of its canonical JSON. */
export const digestOf = (value: unknown): string => `b3:${blake3Text(canonicalJson(value))}`;

/** An order-insensitive digest of a multiset: the digest of the sorted member digests (duplicates kept). */
export const multisetDigest = (members: readonly unknown[]): string => digestOf(members.map((member) => digestOf(member)).sort());
