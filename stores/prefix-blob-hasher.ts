import { Blake3Stream } from '../models/blake3.js';
import { nameBlob } from './blob-hash.js';

const encoder = new TextEncoder();

/**
 * The bytes of the pieces after the stable prefix, shared by every hasher: they are written, copied into the blob and
 * hashed without an await in between, so one buffer serves all (a thousand idle agents kept one each).
 */
let scratch = new Uint8Array(0);

/** The state a digest is finished in: a copy of a hasher's kept state, with the rest hashed on (shared, as `scratch`). */
const finishing = new Blake3Stream();

/**
 * Starts many hashers' blobs share — the first two pieces of every agent's model input of a session, `{"messages":[`
 * and the system message's shared head (`sealSystemMessage`) — encoded and hashed once: their bytes, where the first
 * ends, and the BLAKE3 state after them, by their texts (the last few). A thousand children's first inputs start from
 * it instead of encoding and hashing the head each.
 */
const commonStarts: Array<{ first: string; second: string; firstEnd: number; bytes: Uint8Array; state: Blake3Stream }> = [];

/** A start worth sharing: the second piece is long (a system message's head), both are texts to keep. */
const commonStartOf = (pieces: readonly BlobPiece[], keep: number): (typeof commonStarts)[number] | undefined => {
  const [first, second] = pieces;
  if (keep < 2 || typeof first !== 'string' || typeof second !== 'string' || second.length < 1_024) return undefined;
  let start = commonStarts.find((kept) => kept.second === second && kept.first === first);
  if (start === undefined) {
    const firstEnd = encoder.encode(first).length;
    const bytes = encoder.encode(first + second);
    start = { first, second, firstEnd, bytes, state: new Blake3Stream().update(bytes) };
    if (commonStarts.length >= 4) commonStarts.shift();
    commonStarts.push(start);
  }
  return start;
};

/**
 * A piece of a blob that only grows: `parts[0..count)` joined by `separator`. The list is appended to and never
 * changed otherwise while the same array is handed on (a shortened list must be a new array), so a hasher that kept
 * its first parts needs to look only at the ones added since.
 */
export interface GrowingPiece {
  readonly parts: readonly string[];
  readonly count: number;
  readonly separator: string;
}

/** A piece of a blob: a text, or a growing list of texts. */
export type BlobPiece = string | GrowingPiece;

/** What is kept of a stable piece: the text, or the list and how many of its parts. */
type KeptPiece = string | { parts: readonly string[]; count: number; separator: string };

/**
 * Names successive blobs that share a growing prefix (a session's model inputs: the system message and the history
 * stay byte-identical from round to round) at the cost of what is new in each. A blob is given as pieces, the first
 * `stable` of which are expected to be the same as last time; the hasher keeps those pieces' UTF-8 bytes and the
 * BLAKE3 state after them, so a blob costs the encoding and hashing of the pieces that changed and of the rest (plus
 * one copy of the kept bytes, which makes the blob's array). Texts are compared with `===` (a text kept by identity
 * compares in O(1)); a growing piece by its list's identity, the parts added since being encoded and hashed on. A
 * piece that differs drops the kept bytes from it on, and the state is hashed again over what is left (rare: a
 * compaction). The result equals `hashBlob` of the pieces joined: the same bytes, the same digest, and the bytes are
 * named (`namedDigestOf`). One hasher per sequence of related blobs; it holds the prefix's bytes.
 *
 * The hashing is the JavaScript `Blake3Stream`, not hash-wasm: a round hashes what is new (a few hundred bytes) from the
 * kept state, and hash-wasm's state had to be saved and loaded around each round (its `save` allocates and copies the
 * whole wasm state), which cost more than the hashing; a stream's state is copied in a few dozen words.
 */
export class PrefixBlobHasher {
  #pieces: KeptPiece[] = [];
  /** Where each kept piece's bytes end in `#bytes`. */
  #ends: number[] = [];
  #bytes = new Uint8Array(0);
  #length = 0;
  /** The hash state after `#length` bytes. */
  readonly #state = new Blake3Stream();

  /** The blob of `pieces` joined as UTF-8 bytes and its BLAKE3 hex; the first `stable` pieces are kept for the next call. */
  async hash(pieces: readonly BlobPiece[], stable: number): Promise<{ bytes: Uint8Array; hex: string }> {
    const keep = Math.max(0, Math.min(stable, pieces.length));
    if (this.#pieces.length === 0) this.#startFrom(commonStartOf(pieces, keep));
    let appendFrom = -1;
    let shared = 0;
    let grown = false;
    const limit = Math.min(keep, this.#pieces.length);
    for (; shared < limit; shared++) {
      const piece = pieces[shared]!;
      const kept = this.#pieces[shared]!;
      if (piece === kept) continue;
      if (typeof piece === 'string' || typeof kept === 'string' || piece.parts !== kept.parts || piece.separator !== kept.separator || piece.count < kept.count) break;
      if (piece.count === kept.count) continue;
      // The list grew: its new parts follow its kept ones (what was kept after it, if anything, is dropped).
      if (shared + 1 < this.#pieces.length) this.#truncate(shared + 1);
      appendFrom = this.#length;
      this.#length = this.#encodeParts(piece, kept.count, this.#length);
      this.#pieces[shared] = { parts: piece.parts, count: piece.count, separator: piece.separator };
      this.#ends[shared] = this.#length;
      grown = true;
      shared++;
      break;
    }
    if (!grown) {
      if (shared < this.#pieces.length) this.#truncate(shared);
      appendFrom = this.#length;
    }
    for (let index = shared; index < keep; index++) {
      const piece = pieces[index]!;
      if (typeof piece === 'string') {
        this.#length = this.#encode(piece, this.#length, true);
        this.#pieces.push(piece);
      } else {
        this.#length = this.#encodeParts(piece, 0, this.#length);
        this.#pieces.push({ parts: piece.parts, count: piece.count, separator: piece.separator });
      }
      this.#ends.push(this.#length);
    }
    if (this.#length > appendFrom) this.#state.update(this.#bytes, appendFrom, this.#length);
    let suffix = 0;
    for (let index = keep; index < pieces.length; index++) {
      const piece = pieces[index]!;
      suffix = typeof piece === 'string' ? this.#encode(piece, suffix, false) : this.#encodeParts(piece, 0, suffix, false);
    }
    // What is kept between calls is the prefix and a quarter more (its growth over-allocates up to 3× for UTF-8).
    if (this.#bytes.length > this.#length + (this.#length >> 2) + 1_024) this.#bytes = this.#bytes.slice(0, this.#length + (this.#length >> 2));
    const bytes = Buffer.allocUnsafe(this.#length + suffix);
    bytes.set(this.#bytes.subarray(0, this.#length), 0);
    bytes.set(scratch.subarray(0, suffix), this.#length);
    const hex = finishing.copyFrom(this.#state).update(scratch, 0, suffix).hex();
    nameBlob(bytes, hex);
    return { bytes, hex };
  }

  /** Keep a common start (`commonStartOf`) as this hasher's first two pieces: a copy of its bytes, with room to grow, and its state. */
  #startFrom(start: (typeof commonStarts)[number] | undefined): void {
    if (start === undefined) return;
    const length = start.bytes.length;
    this.#bytes = new Uint8Array(length + (length >> 2));
    this.#bytes.set(start.bytes);
    this.#length = length;
    this.#pieces = [start.first, start.second];
    this.#ends = [start.firstEnd, length];
    this.#state.copyFrom(start.state);
  }

  /** Keep only the first `count` pieces: their bytes stay, the state is hashed again over them. */
  #truncate(count: number): void {
    this.#pieces.length = count;
    this.#ends.length = count;
    this.#length = count === 0 ? 0 : this.#ends[count - 1]!;
    this.#state.reset().update(this.#bytes, 0, this.#length);
  }

  /** Encode a growing piece's parts from `start` (with the separator before each but the first) at `offset`; returns the new end. */
  #encodeParts(piece: GrowingPiece, start: number, offset: number, kept = true): number {
    let end = offset;
    for (let index = start; index < piece.count; index++) {
      if (index > 0) end = this.#encode(piece.separator, end, kept);
      end = this.#encode(piece.parts[index]!, end, kept);
    }
    return end;
  }

  /** Encode `text` at `offset` of the kept bytes (`kept`) or of the scratch bytes; returns the new end. */
  #encode(text: string, offset: number, kept: boolean): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const needed = offset + text.length * 3;
    let target = kept ? this.#bytes : scratch;
    const ascii = text.length === 1 ? text.charCodeAt(0) : 128;
    if (ascii < 128 && offset < target.length) {
      target[offset] = ascii;
      return offset + 1;
    }
    if (target.length < needed) {
      const grown = new Uint8Array(Math.max(needed, target.length * 2, 1_024));
      grown.set(target.subarray(0, offset));
      target = grown;
      if (kept) this.#bytes = grown;
      else scratch = grown;
    }
    return offset + encoder.encodeInto(text, target.subarray(offset)).written;
  }
}
