/**
 * BLAKE3 (hash mode, 32-byte output) in plain TypeScript, synchronous and dependency-free, so pure statecharts can
 * compute the typestate digests they emit and replay regenerates them bit for bit. Follows the reference
 * implementation; tests check it against hash-wasm on inputs of every size class (one block, one chunk, many chunks).
 */
const IV = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;
const BLOCK_LEN = 64;
const CHUNK_LEN = 1024;

/** The message word order of each of the 7 rounds (the permutation applied round after round, precomputed). */
const SCHEDULE: readonly (readonly number[])[] = (() => {
  const rounds: number[][] = [];
  let order = Array.from({ length: 16 }, (_, index) => index);
  for (let round = 0; round < 7; round++) {
    rounds.push(order);
    order = order.map((_, index) => order[PERMUTATION[index]!]!);
  }
  return rounds;
})();

const state = new Uint32Array(16);

const g = (a: number, b: number, c: number, d: number, x: number, y: number): void => {
  let sa = state[a]!;
  let sb = state[b]!;
  let sc = state[c]!;
  let sd = state[d]!;
  sa = (sa + sb + x) | 0;
  sd ^= sa;
  sd = (sd >>> 16) | (sd << 16);
  sc = (sc + sd) | 0;
  sb ^= sc;
  sb = (sb >>> 12) | (sb << 20);
  sa = (sa + sb + y) | 0;
  sd ^= sa;
  sd = (sd >>> 8) | (sd << 24);
  sc = (sc + sd) | 0;
  sb ^= sc;
  sb = (sb >>> 7) | (sb << 25);
  state[a] = sa;
  state[b] = sb;
  state[c] = sc;
  state[d] = sd;
};

/** The compression function: returns all 16 output words (a fresh array). Allocation-free inside the rounds. */
const compress = (chainingValue: Uint32Array, block: Uint32Array, counter: number, blockLength: number, flags: number): Uint32Array => {
  state.set(chainingValue, 0);
  state[8] = IV[0]!;
  state[9] = IV[1]!;
  state[10] = IV[2]!;
  state[11] = IV[3]!;
  state[12] = counter >>> 0;
  state[13] = Math.floor(counter / 0x1_0000_0000) >>> 0;
  state[14] = blockLength;
  state[15] = flags;
  for (let round = 0; round < 7; round++) {
    const m = SCHEDULE[round]!;
    g(0, 4, 8, 12, block[m[0]!]!, block[m[1]!]!);
    g(1, 5, 9, 13, block[m[2]!]!, block[m[3]!]!);
    g(2, 6, 10, 14, block[m[4]!]!, block[m[5]!]!);
    g(3, 7, 11, 15, block[m[6]!]!, block[m[7]!]!);
    g(0, 5, 10, 15, block[m[8]!]!, block[m[9]!]!);
    g(1, 6, 11, 12, block[m[10]!]!, block[m[11]!]!);
    g(2, 7, 8, 13, block[m[12]!]!, block[m[13]!]!);
    g(3, 4, 9, 14, block[m[14]!]!, block[m[15]!]!);
  }
  const out = new Uint32Array(16);
  for (let index = 0; index < 8; index++) {
    out[index] = state[index]! ^ state[index + 8]!;
    out[index + 8] = state[index + 8]! ^ chainingValue[index]!;
  }
  return out;
};

const wordsOf = (bytes: Uint8Array, offset: number, length: number): Uint32Array => {
  const words = new Uint32Array(16);
  for (let index = 0; index < length; index++) words[index >> 2] = words[index >> 2]! | (bytes[offset + index]! << (8 * (index & 3)));
  return words;
};

/** A pending compression whose flags (ROOT or not) are decided later. */
interface Output {
  chainingValue: Uint32Array;
  block: Uint32Array;
  counter: number;
  blockLength: number;
  flags: number;
}

const chainOf = (output: Output): Uint32Array => compress(output.chainingValue, output.block, output.counter, output.blockLength, output.flags).subarray(0, 8);

const chunkOutput = (bytes: Uint8Array, start: number, end: number, chunkIndex: number): Output => {
  let chainingValue: Uint32Array = IV;
  let offset = start;
  let blocks = 0;
  while (end - offset > BLOCK_LEN) {
    chainingValue = compress(chainingValue, wordsOf(bytes, offset, BLOCK_LEN), chunkIndex, BLOCK_LEN, blocks === 0 ? CHUNK_START : 0).slice(0, 8);
    offset += BLOCK_LEN;
    blocks++;
  }
  const length = end - offset;
  return { chainingValue, block: wordsOf(bytes, offset, length), counter: chunkIndex, blockLength: length, flags: (blocks === 0 ? CHUNK_START : 0) | CHUNK_END };
};

const parentOutput = (left: Uint32Array, right: Uint32Array): Output => {
  const block = new Uint32Array(16);
  block.set(left, 0);
  block.set(right, 8);
  return { chainingValue: IV, block, counter: 0, blockLength: BLOCK_LEN, flags: PARENT };
};

/** BLAKE3 of `bytes` as 64 lowercase hex characters. */
export const blake3 = (bytes: Uint8Array): string => {
  const chunks = Math.max(1, Math.ceil(bytes.length / CHUNK_LEN));
  const stack: Uint32Array[] = [];
  for (let chunk = 0; chunk < chunks - 1; chunk++) {
    let chainingValue = chainOf(chunkOutput(bytes, chunk * CHUNK_LEN, (chunk + 1) * CHUNK_LEN, chunk));
    let total = chunk + 1;
    while ((total & 1) === 0) {
      chainingValue = chainOf(parentOutput(stack.pop()!, chainingValue));
      total >>= 1;
    }
    stack.push(chainingValue);
  }
  let output = chunkOutput(bytes, (chunks - 1) * CHUNK_LEN, bytes.length, chunks - 1);
  while (stack.length > 0) output = parentOutput(stack.pop()!, chainOf(output));
  const words = compress(output.chainingValue, output.block, 0, output.blockLength, output.flags | ROOT);
  let hex = '';
  for (let index = 0; index < 8; index++) {
    const word = words[index]!;
    for (let byte = 0; byte < 4; byte++) hex += ((word >>> (8 * byte)) & 0xff).toString(16).padStart(2, '0');
  }
  return hex;
};

const encoder = new TextEncoder();

/** BLAKE3 of a string's UTF-8 bytes. */
export const blake3Text = (text: string): string => blake3(encoder.encode(text));
