import type { IHasher } from 'hash-wasm';
import type { ArtifactRef } from './blob-store.js';
import { StoreError } from './store-errors.js';

let hasher: Promise<IHasher> | undefined;
const REF_PATTERN = /^artifact:\/\/blake3\/([0-9a-f]{64})$/;

/** BLAKE3-256 of `bytes` as lower-case hex. The WebAssembly hasher is loaded on first use (not at import) and reused. */
export async function blake3Hex(bytes: Uint8Array): Promise<string> {
  const instance = await blake3Hasher();
  return instance.init().update(bytes).digest('hex');
}

/**
 * The shared WebAssembly BLAKE3 hasher (loaded on first use). Its users run `init`/`load` … `digest`/`save` without an
 * `await` in between, so they never interleave.
 */
export function blake3Hasher(): Promise<IHasher> {
  return (hasher ??= import('hash-wasm').then((module) => module.createBLAKE3()));
}

/**
 * Digests `hashBlob` computed, by the identity of the bytes: the store's append takes a blob's digest from here instead
 * of hashing it again (a model input is hashed once to name it in `context.projected`, not twice per step).
 */
const namedDigests = new WeakMap<Uint8Array, string>();

/**
 * The bytes a blob stores for `content` and their BLAKE3 hex, remembered so that appending these same bytes (the same
 * array, unchanged — the caller may not write to it afterwards) does not hash them again.
 */
export async function hashBlob(content: Uint8Array | string): Promise<{ bytes: Uint8Array; hex: string }> {
  const bytes = blobBytes(content);
  const hex = await blake3Hex(bytes);
  namedDigests.set(bytes, hex);
  return { bytes, hex };
}

/** Remember that `bytes` (which the caller will not change) hash to `hex`: a blob named without `hashBlob` (`PrefixBlobHasher`). */
export function nameBlob(bytes: Uint8Array, hex: string): void {
  namedDigests.set(bytes, hex);
}

/** The digest `hashBlob` computed for exactly this array, if it did. */
export function namedDigestOf(bytes: Uint8Array): string | undefined {
  return namedDigests.get(bytes);
}

/** The bytes a blob stores for `content`: strings are UTF-8 encoded. */
export function blobBytes(content: Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  if (content instanceof Uint8Array) return content;
  throw new StoreError('STORE_INVALID_ARGUMENT', 'blob content must be a Uint8Array or a string');
}

/** `artifact://blake3/<hex>`. */
export function artifactRef(hex: string): ArtifactRef {
  return `artifact://blake3/${hex}`;
}

/** The hex digest inside a ref; anything but `artifact://blake3/<64 hex>` is `STORE_INVALID_ARGUMENT`. */
export function refDigest(ref: string): string {
  const match = typeof ref === 'string' ? REF_PATTERN.exec(ref) : null;
  if (!match?.[1]) throw new StoreError('STORE_INVALID_ARGUMENT', `not a blob ref: ${String(ref)}`);
  return match[1];
}
