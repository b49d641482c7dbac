import { createRequire } from 'node:module';
import type { IHasher } from 'hash-wasm';
import { blake3KeyWords, blake3Keyed, blake3KeyedShort } from '../models/blake3.js';
import { StoreError } from './store-errors.js';

/*
 * The hash and MAC the chain is made of (docs/architecture.md: *The chain*): BLAKE3 (the store's content hash already) for a
 * record's digest, and BLAKE3's keyed mode — a MAC by design — under the chain key. Both run in hash-wasm's
 * WebAssembly hasher, reused from call to call: about a fifth of what node:crypto's SHA-256 and HMAC objects cost per
 * record. The keyed hashes are short — a record's MAC is one block (the domain and a digest, 49 bytes), a seal's tag
 * a block or two — and are hashed in JavaScript (`blake3KeyedShort`, `blake3Keyed`): a call into WebAssembly and back
 * cost more than those compressions. The record digests' hasher is instantiated once per process (`loadChainHashing`, asynchronous) before the first chain
 * operation; every store operation that chains or checks awaits it. `node:crypto` (ids, random keys, constant-time
 * comparison) is loaded on first use, not with the store: the reading commands never chain anything.
 */

const load = createRequire(import.meta.url);
let loaded: typeof import('node:crypto') | undefined;
const nodeCrypto = (): typeof import('node:crypto') => (loaded ??= load('node:crypto') as typeof import('node:crypto'));

/** Bytes of a chain key. */
export const CHAIN_KEY_BYTES = 32;
/** Bytes of a record's link: the first bytes of its digest (keyless; see `CHAIN_FIELD_BYTES`). */
export const LINK_BYTES = 4;
/** Bytes of a record's MAC: the first bytes of keyed BLAKE3 of its digest under the chain key. */
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
const PREDECESSOR_KIND: Record<number, Uint8Array> = { 0: Uint8Array.of(0), [CHAIN_FIELD_BYTES]: Uint8Array.of(1), [DIGEST_BYTES]: Uint8Array.of(2) };

let hashing: Promise<IHasher> | undefined;
let digester: IHasher | undefined;

/**
 * Instantiate the chain's hasher (once per process; later calls resolve at once). Every chain operation needs it: the
 * stores await it before they chain or check, and so does anything that calls `recordDigest` itself (tests, tools).
 */
export async function loadChainHashing(): Promise<void> {
  digester ??= await (hashing ??= import('hash-wasm').then((module) => module.createBLAKE3(256)));
}

const loadedDigester = (): IHasher => {
  if (digester === undefined) throw new StoreError('STORE_INVALID_ARGUMENT', 'the chain hasher is not loaded: await loadChainHashing() first');
  return digester;
};

/** Bytes before a record's canonical bytes in its digest's input (domain, kind, predecessor). */
export const digestPrefixLength = (predecessorLength: number): number => DIGEST_DOMAIN.length + 1 + predecessorLength;

/** Writes the digest input's prefix (domain, what the predecessor is, the predecessor) at the start of `target`. */
export function writeDigestPrefix(target: Uint8Array, predecessor: Uint8Array): void {
  const kind = PREDECESSOR_KIND[predecessor.length];
  if (kind === undefined) throw new StoreError('STORE_INVALID_ARGUMENT', `a chain predecessor has ${predecessor.length} bytes`);
  target.set(DIGEST_DOMAIN, 0);
  target[DIGEST_DOMAIN.length] = kind[0]!;
  target.set(predecessor, DIGEST_DOMAIN.length + 1);
}

/** The digest of a whole input whose prefix `writeDigestPrefix` wrote (one pass over contiguous bytes). */
export function digestOfInput(input: Uint8Array): Uint8Array {
  return loadedDigester().init().update(input).digest('binary');
}

const prefixScratch = new Uint8Array(digestPrefixLength(DIGEST_BYTES));

/**
 * A record's digest: BLAKE3-256 of the domain, what its predecessor is, the predecessor (nothing for seq 1, the chain
 * field of a chained record, the full digest of a record written before the chain) and the record's canonical bytes.
 */
export function recordDigest(predecessor: Uint8Array, canonical: Uint8Array): Uint8Array {
  writeDigestPrefix(prefixScratch, predecessor);
  return loadedDigester().init().update(prefixScratch.subarray(0, digestPrefixLength(predecessor.length))).update(canonical).digest('binary');
}

/** The bytes of each tag domain (`rein/<domain>/1\0`), made once: a seal is tagged with every append of some stores. */
const tagDomains = new Map<string, Uint8Array>();
const tagDomain = (domain: string): Uint8Array => {
  let bytes = tagDomains.get(domain);
  if (bytes === undefined) {
    bytes = Buffer.from(`rein/${domain}/1\0`, 'latin1');
    tagDomains.set(domain, bytes);
  }
  return bytes;
};

/**
 * The secret that authenticates chains. Never recorded or logged: it prints, inspects and serialises as its id only
 * (the first 8 hex digits of a SHA-256 of it, which tells two keys apart and reveals nothing of either).
 */
export class ChainKey {
  /** Identifies the key in reports (`rein verify` prints it); not secret. */
  readonly id: string;
  /** The key as BLAKE3's keyed mode starts from it (the MAC of a digest, one block, is hashed in JavaScript). */
  readonly #keyWords: Uint32Array;
  /** The MAC's input, its domain written once: a digest is copied in behind it. */
  readonly #macInput = new Uint8Array(MAC_DOMAIN.length + DIGEST_BYTES);

  private constructor(id: string, keyWords: Uint32Array) {
    this.id = id;
    this.#keyWords = keyWords;
    this.#macInput.set(MAC_DOMAIN, 0);
  }

  /** A key from its 32 bytes (see `loadChainKey` for the machine's key, `randomChainKey` for a fresh one). */
  static async create(bytes: Uint8Array): Promise<ChainKey> {
    if (!(bytes instanceof Uint8Array) || bytes.length !== CHAIN_KEY_BYTES) throw new StoreError('CHAIN_KEY_INVALID', `a chain key is ${CHAIN_KEY_BYTES} bytes`);
    await loadChainHashing();
    const id = nodeCrypto().createHash('sha256').update(KEY_ID_DOMAIN).update(bytes).digest('hex').slice(0, 8);
    return new ChainKey(id, blake3KeyWords(bytes));
  }

  /** The MAC of a record's digest (`MAC_BYTES`): keyed BLAKE3 of a domain and the digest. */
  mac(digest: Uint8Array): Uint8Array {
    if (digest.length !== DIGEST_BYTES) throw new StoreError('STORE_INVALID_ARGUMENT', `a record digest has ${DIGEST_BYTES} bytes`);
    const mac = new Uint8Array(MAC_BYTES);
    this.macInto(digest, mac, 0);
    return mac;
  }

  /** Writes the MAC of a record's digest (`mac`) into `target` at `offset`. */
  macInto(digest: Uint8Array, target: Uint8Array, offset: number): void {
    if (digest.length !== DIGEST_BYTES) throw new StoreError('STORE_INVALID_ARGUMENT', `a record digest has ${DIGEST_BYTES} bytes`);
    const input = this.#macInput;
    for (let index = 0; index < DIGEST_BYTES; index++) input[MAC_DOMAIN.length + index] = digest[index]!;
    blake3KeyedShort(this.#keyWords, input, target, offset, MAC_BYTES);
  }

  /** A `TAG_BYTES` keyed BLAKE3 of the parts under a domain of its own (seals, snapshots). */
  tag(domain: string, parts: readonly Uint8Array[]): Uint8Array {
    return blake3Keyed(this.#keyWords, tagDomain(domain), parts, TAG_BYTES);
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
export function randomChainKey(): Promise<ChainKey> {
  return ChainKey.create(nodeCrypto().randomBytes(CHAIN_KEY_BYTES));
}

/** `count` random bytes (key files). */
export function randomBytes(count: number): Buffer {
  return nodeCrypto().randomBytes(count);
}
