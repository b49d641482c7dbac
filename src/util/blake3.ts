import { createBLAKE3, type IHasher } from 'hash-wasm';

let hasher: IHasher | undefined;

/** Load the WASM BLAKE3 once; every later call to `blake3Hex` is synchronous. */
export const loadBlake3 = async (): Promise<void> => {
  hasher ??= await createBLAKE3();
};

/** BLAKE3 of a string or bytes as 64 hex characters. Call `loadBlake3()` once before. */
export const blake3Hex = (input: string | Uint8Array): string => {
  if (!hasher) throw new Error('blake3Hex called before loadBlake3()');
  hasher.init();
  hasher.update(input);
  return hasher.digest('hex');
};
