import type { IHasher } from 'hash-wasm';

/** A fresh BLAKE3 hasher. hash-wasm (a 280 kB CommonJS file) is loaded on the first hash, not when rein is imported. */
export const createBlake3 = async (bits?: number): Promise<IHasher> => (await import('hash-wasm')).createBLAKE3(bits);

let hasher: IHasher | undefined;

/** Load the WASM BLAKE3 once; every later call to `blake3Hex` is synchronous. */
export const loadBlake3 = async (): Promise<void> => {
  hasher ??= await createBlake3();
};

/** BLAKE3 of a string or bytes as 64 hex characters. Call `loadBlake3()` once before. */
export const blake3Hex = (input: string | Uint8Array): string => {
  if (!hasher) throw new Error('blake3Hex called before loadBlake3()');
  hasher.init();
  hasher.update(input);
  return hasher.digest('hex');
};
