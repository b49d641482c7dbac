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
/** On little-endian machines the encoded bytes are read as message words directly; otherwise each block is assembled into `block`. */
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const chaining = new Uint32Array(8);
const bytes = new Uint8Array(CHUNK_LEN + 64);
const words = new Uint32Array(bytes.buffer);
let message: Uint32Array = block;
let messageOffset = 0;
const encoder = new TextEncoder();

/**
 * The BLAKE3 compression function (counter 0) over `block` and `chaining`, with the state in locals: seven rounds
 * of the G mixing function, permuting the message words between rounds. Writes the first 8 output words to
 * `chaining` and returns nothing.
 */
const compress = (blockLength: number, flags: number): void => {
  const b = message;
  const o = messageOffset;
  let m0 = b[o]!, m1 = b[o + 1]!, m2 = b[o + 2]!, m3 = b[o + 3]!, m4 = b[o + 4]!, m5 = b[o + 5]!, m6 = b[o + 6]!, m7 = b[o + 7]!;
  let m8 = b[o + 8]!, m9 = b[o + 9]!, m10 = b[o + 10]!, m11 = b[o + 11]!, m12 = b[o + 12]!, m13 = b[o + 13]!, m14 = b[o + 14]!, m15 = b[o + 15]!;
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

/**
 * Encode `prefix` (ASCII) then `text` as UTF-8 into the shared buffer without building the joined string; returns
 * the byte length, or -1 when it exceeds one chunk.
 */
const encode = (prefix: string | number, text: string): number => {
  let length = 0;
  if (typeof prefix === 'number') {
    // `<n>:` written digit by digit, so no prefix string is built per line.
    let divisor = 1;
    while (divisor * 10 <= prefix) divisor *= 10;
    for (let rest = prefix; divisor >= 1; divisor = Math.floor(divisor / 10)) {
      const digit = Math.floor(rest / divisor);
      bytes[length++] = 48 + digit;
      rest -= digit * divisor;
    }
    bytes[length++] = 58;
  } else {
    for (let index = 0; index < prefix.length; index++) bytes[length++] = prefix.charCodeAt(index);
  }
  if (length + text.length > CHUNK_LEN) return -1;
  const start = length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) {
      const { read, written } = encoder.encodeInto(text, bytes.subarray(start, CHUNK_LEN + 1));
      return read === text.length && start + written <= CHUNK_LEN ? start + written : -1;
    }
    bytes[length++] = code;
  }
  return length;
};

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** The first four output bytes (the little-endian word `word`) as 8 hex characters. */
const hex8 = (word: number): string => HEX[word & 0xff]! + HEX[(word >>> 8) & 0xff]! + HEX[(word >>> 16) & 0xff]! + HEX[word >>> 24]!;

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

const hashEncoded = (length: number): string => {
  const blocks = Math.max(1, Math.ceil(length / 64));
  chaining.set(IV);
  if (littleEndian) {
    bytes.fill(0, length, blocks * 64);
    message = words;
  } else {
    message = block;
  }
  for (let index = 0; index < blocks; index++) {
    if (littleEndian) messageOffset = index * 16;
    else {
      messageOffset = 0;
      loadBlock(index, length);
    }
    const last = index === blocks - 1;
    compress(last ? length - index * 64 : 64, (index === 0 ? CHUNK_START : 0) | (last ? CHUNK_END | ROOT : 0));
  }
  return hex8(chaining[0]!);
};

/** The first 8 hex characters of BLAKE3(`prefix` + `text`) (UTF-8), exactly as `blake3Hex(prefix + text).slice(0, 8)`. */
export const blake3Prefix8 = (text: string, prefix = ''): string => {
  const length = encode(prefix, text);
  return length < 0 ? blake3Hex(prefix + text).slice(0, 8) : hashEncoded(length);
};

/** The line tag hash: the first 8 hex characters of BLAKE3(`"<lineNumber>:<text>"`), without building that string. */
export const blake3LineTag = (lineNumber: number, text: string): string => {
  const length = Number.isSafeInteger(lineNumber) && lineNumber >= 0 ? encode(lineNumber, text) : -1;
  return length < 0 ? blake3Hex(`${lineNumber}:${text}`).slice(0, 8) : hashEncoded(length);
};
