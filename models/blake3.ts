/**
 * BLAKE3 (hash mode, 32-byte output) in plain TypeScript: synchronous and dependency-free, so pure statecharts can
 * compute the typestate digests they emit (and replay regenerates them bit for bit), and fast on short inputs, where
 * crossing into WebAssembly per call costs more than the hashing (line tags hash thousands of short lines per read).
 * The one BLAKE3 of the code base besides hash-wasm, which hashes files, chains records and names most blobs; its
 * incremental form (`Blake3Stream`) names a session's model inputs, whose state is copied every round. Follows the
 * reference implementation; tests check it against hash-wasm on inputs of every size class (one block, one chunk,
 * many chunks) and the stream against the one-shot hash for any split of its input.
 * Lives in models/ (the layer every other may import) so the machines and the stores share it.
 *
 * Allocation-free per block: the compression function keeps its state in locals and reads message words straight
 * from a shared buffer (on little-endian machines; elsewhere each block is assembled into `block`).
 */

const IV = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;
const BLOCK_LEN = 64;
const CHUNK_LEN = 1024;

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();
/** The bytes being hashed (grown on demand, padded to whole blocks) and their words on little-endian machines. */
let bytes = new Uint8Array(4 * CHUNK_LEN);
let words = new Uint32Array(bytes.buffer);
/** The message block for big-endian machines and for parent nodes (left and right chaining values). */
const block = new Uint32Array(16);
/** The chaining value being computed, and the stack of finished subtree values (up to 2^54 chunks deep). */
const chaining = new Uint32Array(8);
const stack = new Uint32Array(8 * 54);

/**
 * The compression function over message words `message[offset..offset + 16)` and `chaining`: seven rounds of the G
 * mixing function with the message permuted between rounds; writes the first 8 output words back to `chaining`.
 */
const compress = (message: Uint32Array, offset: number, counter: number, blockLength: number, flags: number): void => {
  const b = message;
  const o = offset;
  let m0 = b[o]!, m1 = b[o + 1]!, m2 = b[o + 2]!, m3 = b[o + 3]!, m4 = b[o + 4]!, m5 = b[o + 5]!, m6 = b[o + 6]!, m7 = b[o + 7]!;
  let m8 = b[o + 8]!, m9 = b[o + 9]!, m10 = b[o + 10]!, m11 = b[o + 11]!, m12 = b[o + 12]!, m13 = b[o + 13]!, m14 = b[o + 14]!, m15 = b[o + 15]!;
  let v0 = chaining[0]!, v1 = chaining[1]!, v2 = chaining[2]!, v3 = chaining[3]!, v4 = chaining[4]!, v5 = chaining[5]!, v6 = chaining[6]!, v7 = chaining[7]!;
  let v8 = IV[0]!, v9 = IV[1]!, v10 = IV[2]!, v11 = IV[3]!;
  let v12 = counter | 0, v13 = Math.floor(counter / 0x1_0000_0000) | 0, v14 = blockLength, v15 = flags;
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

/** Room for `length` bytes plus one zero-padded block. */
const ensure = (length: number): void => {
  if (bytes.length >= length + BLOCK_LEN) return;
  let size = bytes.length;
  while (size < length + BLOCK_LEN) size *= 2;
  bytes = new Uint8Array(size);
  words = new Uint32Array(bytes.buffer);
};

/** Compress 64-byte block `index` of `bytes` (its words in place, or assembled into `block`). */
const compressBlock = (index: number, counter: number, blockLength: number, flags: number): void => {
  if (littleEndian) return compress(words, index * 16, counter, blockLength, flags);
  const offset = index * BLOCK_LEN;
  for (let word = 0; word < 16; word++) {
    const at = offset + word * 4;
    block[word] = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
  }
  compress(block, 0, counter, blockLength, flags);
};

/** Merge the subtree on top of the stack (left) with `chaining` (right) into `chaining`. */
const parent = (depth: number, root: boolean, iv: Uint32Array = IV, mode = 0): void => {
  block.set(stack.subarray(depth * 8, depth * 8 + 8), 0);
  block.set(chaining, 8);
  chaining.set(iv);
  compress(block, 0, 0, BLOCK_LEN, PARENT | (root ? ROOT : 0) | mode);
};

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const hexWord = (word: number): string => HEX[word & 0xff]! + HEX[(word >>> 8) & 0xff]! + HEX[(word >>> 16) & 0xff]! + HEX[word >>> 24]!;

/** Hash the first `length` bytes of `bytes`; leaves the root output's first 8 words in `chaining`. */
const hashBuffer = (length: number, iv: Uint32Array = IV, mode = 0): void => {
  const blocksTotal = Math.max(1, Math.ceil(length / BLOCK_LEN));
  bytes.fill(0, length, blocksTotal * BLOCK_LEN);
  const chunks = Math.max(1, Math.ceil(length / CHUNK_LEN));
  let depth = 0;
  for (let chunk = 0; chunk < chunks; chunk++) {
    const start = chunk * CHUNK_LEN;
    const end = Math.min(start + CHUNK_LEN, length);
    const blocks = Math.max(1, Math.ceil((end - start) / BLOCK_LEN));
    const last = chunk === chunks - 1;
    chaining.set(iv);
    for (let index = 0; index < blocks; index++) {
      const final = index === blocks - 1;
      const flags = (index === 0 ? CHUNK_START : 0) | (final ? CHUNK_END : 0) | (final && chunks === 1 ? ROOT : 0) | mode;
      compressBlock(start / BLOCK_LEN + index, chunk, final ? end - start - index * BLOCK_LEN : BLOCK_LEN, flags);
    }
    if (last) break;
    // Merge completed subtrees: after chunk n (counting from 1), as many merges as n has trailing zero bits.
    let total = chunk + 1;
    while ((total & 1) === 0) {
      depth--;
      parent(depth, false, iv, mode);
      total >>= 1;
    }
    stack.set(chaining, depth * 8);
    depth++;
  }
  while (depth > 0) {
    depth--;
    parent(depth, depth === 0, iv, mode);
  }
};

const hexOf = (): string => {
  let hex = '';
  for (let index = 0; index < 8; index++) hex += hexWord(chaining[index]!);
  return hex;
};

/** BLAKE3 of `input` as 64 lowercase hex characters. */
export const blake3 = (input: Uint8Array): string => blake3Prefix(input, input.length);

/** BLAKE3 of the first `length` bytes of `input` as 64 lowercase hex characters. */
export const blake3Prefix = (input: Uint8Array, length: number): string => {
  ensure(length);
  if (length > 64) bytes.set(length === input.length ? input : input.subarray(0, length), 0);
  else for (let index = 0; index < length; index++) bytes[index] = input[index]!;
  hashBuffer(length);
  return hexOf();
};

/**
 * Encode `prefix` (ASCII, or a line number written as `<n>:`) then `text` as UTF-8 into `bytes` without building the
 * joined string; returns the byte length.
 */
const encode = (prefix: string | number, text: string): number => {
  ensure((typeof prefix === 'number' ? 17 : prefix.length) + text.length * 3);
  let length = 0;
  if (typeof prefix === 'number') {
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
  // Past ~100 characters the native encoder is faster than the loop (a CallSpec's canonical JSON: ~2× on the whole
  // digest, measured 1.5 against 2.8 µs at 250); the loop stays for shorter texts (line tags, most digests), where the
  // call into it costs more than it saves (1.3 against 1.1 µs at 40).
  if (text.length > 100) return length + encoder.encodeInto(text, bytes.subarray(length)).written;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) return length - index + encoder.encodeInto(text, bytes.subarray(length - index)).written;
    bytes[length++] = code;
  }
  return length;
};

/** BLAKE3 of a string's UTF-8 bytes. */
export const blake3Text = (text: string): string => {
  hashBuffer(encode('', text));
  return hexOf();
};

/** The first 8 hex characters of BLAKE3(`prefix` + `text`) (UTF-8); `prefix` is ASCII. */
export const blake3Prefix8 = (text: string, prefix = ''): string => {
  hashBuffer(encode(prefix, text));
  return hexWord(chaining[0]!);
};

/** The line tag hash: the first 8 hex characters of BLAKE3(`"<lineNumber>:<text>"`), without building that string. */
export const blake3LineTag = (lineNumber: number, text: string): string => {
  if (!Number.isSafeInteger(lineNumber) || lineNumber < 0) return blake3Prefix8(text, `${lineNumber}:`);
  hashBuffer(encode(lineNumber, text));
  return hexWord(chaining[0]!);
};

/** Words of `length` (≤ 64) bytes of `source` from `offset` into `block`, little-endian, zero-padded to 16 words. */
const loadBlock = (source: Uint8Array, offset: number, length: number): void => {
  if (length === BLOCK_LEN) {
    for (let word = 0, at = offset; word < 16; word++, at += 4) block[word] = source[at]! | (source[at + 1]! << 8) | (source[at + 2]! << 16) | (source[at + 3]! << 24);
    return;
  }
  block.fill(0);
  for (let index = 0; index < length; index++) block[index >> 2]! |= source[offset + index]! << ((index & 3) * 8);
};

/**
 * Incremental BLAKE3 (hash mode, 32-byte output) whose whole state is a few small typed arrays: the chunk in progress
 * (its chaining value, how many of its blocks are compressed, the block held back because it may be the last), the
 * chunk counter and the stack of finished subtrees. `copyFrom` duplicates a state in O(depth) words and `hex`
 * finalises without changing it, so a caller can keep the state after a prefix and hash several continuations of it.
 * Equal to `blake3` of everything passed to `update`, for any split (tests/machines/typestate/blake3.prop.test.ts).
 */
export class Blake3Stream {
  /** The chaining value of the chunk in progress. */
  readonly #cv = new Uint32Array(8);
  /** Finished subtrees' chaining values, 8 words each, `#depth` of them (grown on demand). */
  #stack = new Uint32Array(8 * 4);
  #depth = 0;
  /** The chunk in progress: its index (counter) and how many of its blocks are compressed (0–15). */
  #chunk = 0;
  #blocks = 0;
  /** Bytes not compressed yet (up to a whole block: the last block of a chunk, or of all, is compressed with flags). */
  readonly #buffer = new Uint8Array(BLOCK_LEN);
  #buffered = 0;

  constructor() {
    this.#cv.set(IV);
  }

  /** Back to the state of no input. */
  reset(): this {
    this.#cv.set(IV);
    this.#depth = 0;
    this.#chunk = 0;
    this.#blocks = 0;
    this.#buffered = 0;
    return this;
  }

  /** Become a copy of `other`'s state. */
  copyFrom(other: Blake3Stream): this {
    this.#cv.set(other.#cv);
    const words = other.#depth * 8;
    if (this.#stack.length < words) this.#stack = new Uint32Array(other.#stack.length);
    for (let index = 0; index < words; index++) this.#stack[index] = other.#stack[index]!;
    this.#depth = other.#depth;
    this.#chunk = other.#chunk;
    this.#blocks = other.#blocks;
    this.#buffer.set(other.#buffer);
    this.#buffered = other.#buffered;
    return this;
  }

  /** Hash `bytes[start..end)` on. */
  update(bytes: Uint8Array, start = 0, end = bytes.length): this {
    let at = start;
    while (at < end) {
      // A block is compressed only once more input follows it (the last one takes the end flags).
      if (this.#buffered === BLOCK_LEN) {
        loadBlock(this.#buffer, 0, BLOCK_LEN);
        this.#compressBlock();
        this.#buffered = 0;
      }
      if (this.#buffered === 0) {
        while (end - at > BLOCK_LEN) {
          loadBlock(bytes, at, BLOCK_LEN);
          this.#compressBlock();
          at += BLOCK_LEN;
        }
      }
      const take = Math.min(BLOCK_LEN - this.#buffered, end - at);
      const buffer = this.#buffer;
      let buffered = this.#buffered;
      for (let index = 0; index < take; index++) buffer[buffered++] = bytes[at + index]!;
      this.#buffered = buffered;
      at += take;
    }
    return this;
  }

  /** The digest of everything hashed so far as 64 lowercase hex characters; the state is left as it was. */
  hex(): string {
    loadBlock(this.#buffer, 0, this.#buffered);
    chaining.set(this.#cv);
    const flags = (this.#blocks === 0 ? CHUNK_START : 0) | CHUNK_END;
    compress(block, 0, this.#chunk, this.#buffered, this.#depth === 0 ? flags | ROOT : flags);
    for (let depth = this.#depth - 1; depth >= 0; depth--) {
      block.set(this.#stack.subarray(depth * 8, depth * 8 + 8), 0);
      block.set(chaining, 8);
      chaining.set(IV);
      compress(block, 0, 0, BLOCK_LEN, PARENT | (depth === 0 ? ROOT : 0));
    }
    return hexOf();
  }

  /** Compress the full block in `block` into the chunk in progress; the chunk's sixteenth finishes it (more input follows). */
  #compressBlock(): void {
    chaining.set(this.#cv);
    const last = this.#blocks === CHUNK_LEN / BLOCK_LEN - 1;
    compress(block, 0, this.#chunk, BLOCK_LEN, (this.#blocks === 0 ? CHUNK_START : 0) | (last ? CHUNK_END : 0));
    if (!last) {
      this.#cv.set(chaining);
      this.#blocks++;
      return;
    }
    // Merge finished subtrees: after chunk n (counting from 1), as many merges as n has trailing zero bits.
    let total = this.#chunk + 1;
    while (total % 2 === 0) {
      this.#depth--;
      block.set(this.#stack.subarray(this.#depth * 8, this.#depth * 8 + 8), 0);
      block.set(chaining, 8);
      chaining.set(IV);
      compress(block, 0, 0, BLOCK_LEN, PARENT);
      total /= 2;
    }
    if (this.#stack.length < (this.#depth + 1) * 8) {
      const grown = new Uint32Array(this.#stack.length * 2);
      grown.set(this.#stack);
      this.#stack = grown;
    }
    this.#stack.set(chaining, this.#depth * 8);
    this.#depth++;
    this.#chunk++;
    this.#blocks = 0;
    this.#cv.set(IV);
  }
}

const KEYED_HASH = 16;

/** A BLAKE3 key's 32 bytes as the 8 little-endian words keyed mode starts from (`blake3KeyedShort`). */
export const blake3KeyWords = (key: Uint8Array): Uint32Array => {
  if (key.length !== 32) throw new RangeError('a BLAKE3 key is 32 bytes');
  const words = new Uint32Array(8);
  for (let word = 0, at = 0; word < 8; word++, at += 4) words[word] = key[at]! | (key[at + 1]! << 8) | (key[at + 2]! << 16) | (key[at + 3]! << 24);
  return words;
};

/**
 * Keyed BLAKE3 of at most one block (`input.length` ≤ 64): its first `count` (≤ 32) output bytes written into
 * `target` at `offset`. One compression — a record's MAC costs that and no call into WebAssembly.
 */
export const blake3KeyedShort = (keyWords: Uint32Array, input: Uint8Array, target: Uint8Array, offset: number, count: number): void => {
  if (input.length > BLOCK_LEN) throw new RangeError('blake3KeyedShort hashes at most one block');
  loadBlock(input, 0, input.length);
  chaining.set(keyWords);
  compress(block, 0, 0, input.length, CHUNK_START | CHUNK_END | ROOT | KEYED_HASH);
  for (let index = 0; index < count; index++) target[offset + index] = (chaining[index >> 2]! >>> ((index & 3) * 8)) & 0xff;
};

/** Copies `source` into `bytes` at `at` (short ones byte by byte: cheaper than a call to `set`); returns the end. */
const copyInto = (source: Uint8Array, at: number): number => {
  const length = source.length;
  if (length > 32) bytes.set(source, at);
  else for (let index = 0; index < length; index++) bytes[at + index] = source[index]!;
  return at + length;
};

/**
 * Keyed BLAKE3 of `head` then `parts` (any length): its first `count` (≤ 32) output bytes as a new array. Seals' and
 * snapshots' tags: a few dozen bytes, where a call into WebAssembly cost more than the hashing.
 */
export const blake3Keyed = (keyWords: Uint32Array, head: Uint8Array, parts: readonly Uint8Array[], count: number): Uint8Array => {
  let length = head.length;
  for (const part of parts) length += part.length;
  ensure(length);
  let at = copyInto(head, 0);
  for (const part of parts) at = copyInto(part, at);
  hashBuffer(length, keyWords, KEYED_HASH);
  const out = new Uint8Array(count);
  for (let index = 0; index < count; index++) out[index] = (chaining[index >> 2]! >>> ((index & 3) * 8)) & 0xff;
  return out;
};
