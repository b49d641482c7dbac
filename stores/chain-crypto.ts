import { createRequire } from 'node:module';
import type { KeyObject } from 'node:crypto';
import { StoreError } from './store-errors.js';

/*
 * The hash and MAC the chain is made of (README: *The chain*). `node:crypto` is loaded on first use, not with the
 * store: the reading commands (`rein sessions`, `rein show`) never chain anything, and loading it costs them ~10 ms.
 */

const load = createRequire(import.meta.url);
let loaded: typeof import('node:crypto') | undefined;
const nodeCrypto = (): typeof import('node:crypto') => (loaded ??= load('node:crypto') as typeof import('node:crypto'));

/** Bytes of a chain key. */
export const CHAIN_KEY_BYTES = 32;
/** Bytes of a record's link: the first bytes of its digest (keyless; see `CHAIN_FIELD_BYTES`). */
export const LINK_BYTES = 4;
/** Bytes of a record's MAC: the first bytes of HMAC-SHA-256 of its digest under the chain key. */
export const MAC_BYTES = 8;
/**
 * Bytes of a record's chain field: its link then its MAC. The MAC's 64 bits are what an attacker without the key must
 * guess (one try per verification on this machine: a MAC cannot be tested offline without the key). The link is a
 * keyless check only — anyone can recompute it, so more bits would buy no security — that tells a naive edit
 * ("broken") from a rewrite ("not authenticated") and lets a machine without the key see the log is self-consistent;
 * a random change slips past it with probability 2^-32 and is still caught by the MAC.
 */
export const CHAIN_FIELD_BYTES = LINK_BYTES + MAC_BYTES;
/** Bytes of a record's full digest: what a record written before the chain passes on to its successor. */
export const DIGEST_BYTES = 32;
/** Bytes of a seal's or a snapshot's tag. */
export const TAG_BYTES = 16;

const DIGEST_DOMAIN = Buffer.from('rein/chain/1\0', 'latin1');
const MAC_DOMAIN = Buffer.from('rein/chain-mac/1\0', 'latin1');
const KEY_ID_DOMAIN = Buffer.from('rein/chain-key-id/1\0', 'latin1');
/** The one byte after the domain: what the predecessor is (none, a chain field, the digest of an unchained record). */
const PREDECESSOR_KIND: Record<number, Buffer> = { 0: Buffer.from([0]), [CHAIN_FIELD_BYTES]: Buffer.from([1]), [DIGEST_BYTES]: Buffer.from([2]) };

/**
 * A record's digest: SHA-256 of the domain, what its predecessor is, the predecessor (nothing for seq 1, the chain
 * field of a chained record, the full digest of a record written before the chain) and the record's canonical bytes.
 */
export function recordDigest(predecessor: Uint8Array, canonical: Uint8Array): Buffer {
  const kind = PREDECESSOR_KIND[predecessor.length];
  if (kind === undefined) throw new StoreError('STORE_INVALID_ARGUMENT', `a chain predecessor has ${predecessor.length} bytes`);
  return nodeCrypto().createHash('sha256').update(DIGEST_DOMAIN).update(kind).update(predecessor).update(canonical).digest();
}

/**
 * The secret that authenticates chains. Never recorded or logged: it prints, inspects and serialises as its id only
 * (the first 8 hex digits of a SHA-256 of it, which tells two keys apart and reveals nothing of either).
 */
export class ChainKey {
  /** Identifies the key in reports (`rein verify` prints it); not secret. */
  readonly id: string;
  readonly #key: KeyObject;

  /** A key from its 32 bytes (see `loadChainKey` for the machine's key, `randomChainKey` for a fresh one). */
  constructor(bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array) || bytes.length !== CHAIN_KEY_BYTES) throw new StoreError('CHAIN_KEY_INVALID', `a chain key is ${CHAIN_KEY_BYTES} bytes`);
    const crypto = nodeCrypto();
    this.#key = crypto.createSecretKey(Buffer.from(bytes));
    this.id = crypto.createHash('sha256').update(KEY_ID_DOMAIN).update(bytes).digest('hex').slice(0, 8);
  }

  /** The MAC of a record's digest (`MAC_BYTES`). */
  mac(digest: Uint8Array): Buffer {
    return nodeCrypto().createHmac('sha256', this.#key).update(MAC_DOMAIN).update(digest).digest().subarray(0, MAC_BYTES);
  }

  /** A `TAG_BYTES` HMAC of the parts under a domain of its own (seals, snapshots). */
  tag(domain: string, parts: readonly Uint8Array[]): Buffer {
    const hmac = nodeCrypto().createHmac('sha256', this.#key).update(`rein/${domain}/1\0`, 'latin1');
    for (const part of parts) hmac.update(part);
    return hmac.digest().subarray(0, TAG_BYTES);
  }

  /** Constant-time comparison of two tags or MACs of equal length. */
  static same(left: Uint8Array, right: Uint8Array): boolean {
    return left.length === right.length && nodeCrypto().timingSafeEqual(left, right);
  }

  toJSON(): { chainKey: string } {
    return { chainKey: this.id };
  }

  toString(): string {
    return `ChainKey(${this.id})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** A fresh random chain key (the in-memory store's default; tests that play another machine). */
export function randomChainKey(): ChainKey {
  return new ChainKey(nodeCrypto().randomBytes(CHAIN_KEY_BYTES));
}

/** `count` random bytes (key files). */
export function randomBytes(count: number): Buffer {
  return nodeCrypto().randomBytes(count);
}
