/*
 * Line tags and short prefixes use the JavaScript BLAKE3 of machines/typestate/blake3.ts (the one hand-written BLAKE3
 * of the code base): for thousands of short lines per read it beats crossing into WebAssembly once per line, and it
 * gives the same digests as `blake3Hex` (hash-wasm) — a property test checks both against each other.
 */
export { blake3LineTag, blake3Prefix8 } from '../../machines/typestate/blake3.js';
