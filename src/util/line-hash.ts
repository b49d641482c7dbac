import { blake3Hex } from './blake3.js';

/*
 * BLAKE3 for short inputs (one chunk, at most 1,024 bytes), computed in JavaScript: line tags hash thousands of
 * short lines per read, and crossing into WebAssembly once per line costs more than the hashing. Longer inputs go
 * to the WebAssembly BLAKE3 (`blake3Hex`). A property test checks both against each other.
 */

const IV = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const CHUNK_START = 1;
const CHUNK_END = 2;
const ROOT = 8;
const CHUNK_LEN = 1024;

const block = new Uint32Array(16);
const chaining = new Uint32Array(8);
const bytes = new Uint8Array(CHUNK_LEN + 64);
const encoder = new TextEncoder();

/**
 * The BLAKE3 compression function (counter 0) over `block` and `chaining`, with the state in locals: seven rounds
 * of the G mixing function, permuting the message words between rounds. Writes the first 8 output words to
 * `chaining` and returns nothing.
 */
const compress = (blockLength: number, flags: number): void => {
  let m0 = block[0]!, m1 = block[1]!, m2 = block[2]!, m3 = block[3]!, m4 = block[4]!, m5 = block[5]!, m6 = block[6]!, m7 = block[7]!;
  let m8 = block[8]!, m9 = block[9]!, m10 = block[10]!, m11 = block[11]!, m12 = block[12]!, m13 = block[13]!, m14 = block[14]!, m15 = block[15]!;
  let v0 = chaining[0]!, v1 = chaining[1]!, v2 = chaining[2]!, v3 = chaining[3]!, v4 = chaining[4]!, v5 = chaining[5]!, v6 = chaining[6]!, v7 = chaining[7]!;
  let v8 = IV[0]!, v9 = IV[1]!, v10 = IV[2]!, v11 = IV[3]!, v12 = 0, v13 = 0, v14 = blockLength, v15 = flags;
  for (let round = 0; round < 7; round++) {
    // Columns.
    v0 = (v0 + v4 + m0) | 0; v12 ^= v0; v12 = (v12 >>> 16) | (v12 << 16); v8 = (v8 + v12) | 0; v4 ^= v8; v4 = (v4 >>> 12) | (v4 << 20);
    v0 = (v0 + v4 + m1) | 0; v12 ^= v0; v12 = (v12 >>> 8) | (v12 << 24); v8 = (v8 + v12) | 0; v4 ^= v8; v4 = (v4 >>> 7) | (v4 << 25);
    v1 = (v1 + v5 + m2) | 0; v13 ^= v1; v13 = (v13 >>> 16) | (v13 << 16); v9 = (v9 + v13) | 0; v5 ^= v9; v5 = (v5 >>> 12) | (v5 << 20);
    v1 = (v1 + v5 + m3) | 0; v13 ^= v1; v13 = (v13 >>> 8) | (v13 << 24); v9 = (v9 + v13) | 0; v5 ^= v9; v5 = (v5 >>> 7) | (v5 << 25);
    v2 = (v2 + v6 + m4) | 0; v14 ^= v2; v14 = (v14 >>> 16) | (v14 << 16); v10 = (v10 + v14) | 0; v6 ^= v10; v6 = (v6 >>> 12) | (v6 << 20);
    v2 = (v2 + v6 + m5) | 0; v14 ^= v2; v14 = (v14 >>> 8) | (v14 << 24); v10 = (v10 + v14) | 0; v6 ^= v10; v6 = (v6 >>> 7) | (v6 << 25);
    v3 = (v3 + v7 + m6) | 0; v15 ^= v3; v15 = (v15 >>> 16) | (v15 << 16); v11 = (v11 + v15) | 0; v7 ^= v11; v7 = (v7 >>> 12) | (v7 << 20);
    v3 = (v3 + v7 + m7) | 0; v15 ^= v3; v15 = (v15 >>> 8) | (v15 << 24); v11 = (v11 + v15) | 0; v7 ^= v11; v7 = (v7 >>> 7) | (v7 << 25);
    // Diagonals.
    v0 = (v0 + v5 + m8) | 0; v15 ^= v0; v15 = (v15 >>> 16) | (v15 << 16); v10 = (v10 + v15) | 0; v5 ^= v10; v5 = (v5 >>> 12) | (v5 << 20);
    v0 = (v0 + v5 + m9) | 0; v15 ^= v0; v15 = (v15 >>> 8) | (v15 << 24); v10 = (v10 + v15) | 0; v5 ^= v10; v5 = (v5 >>> 7) | (v5 << 25);
    v1 = (v1 + v6 + m10) | 0; v12 ^= v1; v12 = (v12 >>> 16) | (v12 << 16); v11 = (v11 + v12) | 0; v6 ^= v11; v6 = (v6 >>> 12) | (v6 << 20);
    v1 = (v1 + v6 + m11) | 0; v12 ^= v1; v12 = (v12 >>> 8) | (v12 << 24); v11 = (v11 + v12) | 0; v6 ^= v11; v6 = (v6 >>> 7) | (v6 << 25);
    v2 = (v2 + v7 + m12) | 0; v13 ^= v2; v13 = (v13 >>> 16) | (v13 << 16); v8 = (v8 + v13) | 0; v7 ^= v8; v7 = (v7 >>> 12) | (v7 << 20);
    v2 = (v2 + v7 + m13) | 0; v13 ^= v2; v13 = (v13 >>> 8) | (v13 << 24); v8 = (v8 + v13) | 0; v7 ^= v8; v7 = (v7 >>> 7) | (v7 << 25);
    v3 = (v3 + v4 + m14) | 0; v14 ^= v3; v14 = (v14 >>> 16) | (v14 << 16); v9 = (v9 + v14) | 0; v4 ^= v9; v4 = (v4 >>> 12) | (v4 << 20);
    v3 = (v3 + v4 + m15) | 0; v14 ^= v3; v14 = (v14 >>> 8) | (v14 << 24); v9 = (v9 + v14) | 0; v4 ^= v9; v4 = (v4 >>> 7) | (v4 << 25);
    // The message permutation: 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8.
    const t0 = m0, t1 = m1, t2 = m2, t3 = m3, t4 = m4, t5 = m5, t6 = m6, t7 = m7, t8 = m8, t9 = m9, t10 = m10, t11 = m11, t12 = m12, t13 = m13, t14 = m14, t15 = m15;
    m0 = t2; m1 = t6; m2 = t3; m3 = t10; m4 = t7; m5 = t0; m6 = t4; m7 = t13; m8 = t1; m9 = t11; m10 = t12; m11 = t5; m12 = t9; m13 = t14; m14 = t15; m15 = t8;
  }
  chaining[0] = v0 ^ v8; chaining[1] = v1 ^ v9; chaining[2] = v2 ^ v10; chaining[3] = v3 ^ v11;
  chaining[4] = v4 ^ v12; chaining[5] = v5 ^ v13; chaining[6] = v6 ^ v14; chaining[7] = v7 ^ v15;
};

/** Encode `text` as UTF-8 into the shared buffer; returns its byte length, or -1 when it exceeds one chunk. */
const encode = (text: string): number => {
  if (text.length > CHUNK_LEN) return -1;
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) {
      const { read, written } = encoder.encodeInto(text, bytes.subarray(0, CHUNK_LEN + 1));
      return read === text.length && written <= CHUNK_LEN ? written : -1;
    }
    bytes[length++] = code;
  }
  return length;
};

const hex8 = (word: number): string => {
  const swapped = ((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24);
  return (swapped >>> 0).toString(16).padStart(8, '0');
};

/** Load 64-byte block `index` of the shared buffer (zero-padded past `length`) into `block`. */
const loadBlock = (index: number, length: number): void => {
  const offset = index * 64;
  for (let word = 0; word < 16; word++) {
    const at = offset + word * 4;
    block[word] = at + 3 < length
      ? bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)
      : (at < length ? bytes[at]! : 0) | (at + 1 < length ? bytes[at + 1]! << 8 : 0) | (at + 2 < length ? bytes[at + 2]! << 16 : 0);
  }
};

/** The first 8 hex characters of BLAKE3(`text`) (UTF-8), exactly as `blake3Hex(text).slice(0, 8)`. */
export const blake3Prefix8 = (text: string): string => {
  const length = encode(text);
  if (length < 0) return blake3Hex(text).slice(0, 8);
  const blocks = Math.max(1, Math.ceil(length / 64));
  chaining.set(IV);
  for (let index = 0; index < blocks; index++) {
    loadBlock(index, length);
    const last = index === blocks - 1;
    compress(last ? length - index * 64 : 64, (index === 0 ? CHUNK_START : 0) | (last ? CHUNK_END | ROOT : 0));
  }
  return hex8(chaining[0]!);
};
