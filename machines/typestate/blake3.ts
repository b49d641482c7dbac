/** The synchronous BLAKE3 the typestate digests use (models/blake3.ts: shared with the stores' incremental hasher). */
export { blake3, blake3LineTag, blake3Prefix, blake3Prefix8, blake3Text } from '../../models/blake3.js';
