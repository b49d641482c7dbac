import type { IHasher } from 'hash-wasm';
import type { ArtifactRef } from './blob-store.js';
import { StoreError } from './store-errors.js';

let hasher: Promise<IHasher> | undefined;
const REF_PATTERN = /^artifact:\/\/blake3\/([0-9a-f]{64})$/;

/** BLAKE3-256 of `bytes` as lower-case hex. The WebAssembly hasher is loaded on first use (not at import) and reused. */
export async function blake3Hex(bytes: Uint8Array): Promise<string> {
  const instance = await (hasher ??= import('hash-wasm').then((module) => module.createBLAKE3()));
  return instance.init().update(bytes).digest('hex');
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
