import type { IHasher } from 'hash-wasm';
import { nameBlob, blake3Hasher } from './blob-hash.js';

const encoder = new TextEncoder();

/**
 * Names successive blobs that share a growing prefix (a session's model inputs: the system message and the history
 * stay byte-identical from round to round) at the cost of what is new in each. A blob is given as text pieces, the
 * first `stable` of which are expected to be the same as last time; the hasher keeps those pieces' UTF-8 bytes and
 * the BLAKE3 state after them, so a blob costs the encoding and hashing of the pieces that changed and of the rest
 * (one copy of the kept bytes makes the blob's array). Pieces are compared with `===` (a piece kept by identity
 * compares in O(1)); a piece that differs drops the kept bytes from it on, and the state is hashed again over what
 * is left (rare: a compaction). The result equals `hashBlob(pieces.join(''))`: the same bytes, the same digest, and
 * the bytes are named (`namedDigestOf`). One hasher per sequence of related blobs; it holds the prefix's bytes.
 */
export class PrefixBlobHasher {
  #pieces: string[] = [];
  /** Where each kept piece's bytes end in `#bytes`. */
  #ends: number[] = [];
  #bytes = new Uint8Array(0);
  #length = 0;
  /** The hasher's state after `#length` bytes (undefined: after none). */
  #state: Uint8Array | undefined;
  #scratch = new Uint8Array(0);

  /** The blob `pieces.join('')` as UTF-8 bytes and its BLAKE3 hex; the first `stable` pieces are kept for the next call. */
  async hash(pieces: readonly string[], stable: number): Promise<{ bytes: Uint8Array; hex: string }> {
    const hasher = await blake3Hasher();
    const keep = Math.max(0, Math.min(stable, pieces.length));
    let shared = 0;
    const limit = Math.min(keep, this.#pieces.length);
    while (shared < limit && pieces[shared] === this.#pieces[shared]) shared++;
    if (shared < this.#pieces.length) this.#truncate(hasher, shared);
    if (shared < keep) {
      const from = this.#length;
      for (let index = shared; index < keep; index++) {
        const piece = pieces[index]!;
        this.#length = this.#encode(piece, this.#length, true);
        this.#pieces.push(piece);
        this.#ends.push(this.#length);
      }
      this.#resume(hasher).update(this.#bytes.subarray(from, this.#length));
      this.#state = hasher.save();
    }
    let suffix = 0;
    for (let index = keep; index < pieces.length; index++) suffix = this.#encode(pieces[index]!, suffix, false);
    const bytes = Buffer.allocUnsafe(this.#length + suffix);
    bytes.set(this.#bytes.subarray(0, this.#length), 0);
    bytes.set(this.#scratch.subarray(0, suffix), this.#length);
    const hex = this.#resume(hasher).update(this.#scratch.subarray(0, suffix)).digest('hex');
    nameBlob(bytes, hex);
    return { bytes, hex };
  }

  /** The hasher at the kept state (a fresh one when nothing is kept). */
  #resume(hasher: IHasher): IHasher {
    if (this.#state === undefined) return hasher.init();
    hasher.load(this.#state);
    return hasher;
  }

  /** Keep only the first `count` pieces: their bytes stay, the state is hashed again over them. */
  #truncate(hasher: IHasher, count: number): void {
    this.#pieces.length = count;
    this.#ends.length = count;
    this.#length = count === 0 ? 0 : this.#ends[count - 1]!;
    if (this.#length === 0) this.#state = undefined;
    else {
      hasher.init().update(this.#bytes.subarray(0, this.#length));
      this.#state = hasher.save();
    }
  }

  /** Encode `text` at `offset` of the kept bytes (`kept`) or of the scratch bytes; returns the new end. */
  #encode(text: string, offset: number, kept: boolean): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const needed = offset + text.length * 3;
    let target = kept ? this.#bytes : this.#scratch;
    if (target.length < needed) {
      const grown = new Uint8Array(Math.max(needed, target.length * 2, 1_024));
      grown.set(target.subarray(0, offset));
      target = grown;
      if (kept) this.#bytes = grown;
      else this.#scratch = grown;
    }
    return offset + encoder.encodeInto(text, target.subarray(offset)).written;
  }
}
