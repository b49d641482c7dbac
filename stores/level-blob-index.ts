/*
 * A stream's blob index: which blobs an open stream database may hold, kept in memory so an append need not read the
 * database to learn that a blob is new. Split from level-stream.ts (issue 31).
 */
import { BLOB_KEYS, DELTA_KEYS } from './level-keys.js';

/** `b!…` or `d!…`: a blob key, whole or delta. */
const isBlobKey = (key: string): boolean => key.length === 66 && key[1] === '!' && (key[0] === 'b' || key[0] === 'd');

/**
 * A blob's entry in a stream's blob index: the first 28 bits of its BLAKE3, a small integer. Two blobs may share one
 * (then `storedBlobs` reads to tell them apart); a stored blob never lacks its entry.
 */
const blobIndexEntry = (hex: string): number => Number.parseInt(hex.slice(0, 7), 16);

/**
 * The blob index: one entry (`blobIndexEntry`) per blob key the stream holds, whole or delta, read from the database
 * the first time a blob is appended after open and kept up to date by `noteWrite` (the LevelDB lock makes this process
 * the stream's only writer). A small integer per blob, so it stays a few bytes per round trip.
 */
export class StreamBlobIndex {
  #entries: Set<number> | undefined;
  /** The database's keys within `bounds`. */
  readonly #readKeys: (bounds: { gte: string; lt: string }) => Promise<string[]>;

  constructor(readKeys: (bounds: { gte: string; lt: string }) => Promise<string[]>) {
    this.#readKeys = readKeys;
  }

  /** A write is storing `key`: indexed before the write (an entry for a blob the write then failed to store only costs a read). */
  noteWrite(key: string): void {
    if (this.#entries !== undefined && isBlobKey(key)) this.#entries.add(blobIndexEntry(key.slice(2)));
  }

  /** Those of `hexes` the stream may hold (every one it holds, and rarely one sharing its entry): the rest it does not. */
  async candidates(hexes: readonly string[]): Promise<string[]> {
    const index = this.#entries ?? (await this.#load());
    return hexes.filter((hex) => index.has(blobIndexEntry(hex)));
  }

  /** `candidates`, at once when the index is loaded; undefined when it is not yet (then await `candidates`). */
  candidatesNow(hexes: readonly string[]): string[] | undefined {
    const index = this.#entries;
    if (index === undefined) return undefined;
    return hexes.filter((hex) => index.has(blobIndexEntry(hex)));
  }

  async #load(): Promise<Set<number>> {
    const index = new Set<number>();
    for (const bounds of [BLOB_KEYS, DELTA_KEYS]) {
      const keys = await this.#readKeys(bounds);
      for (const key of keys) index.add(blobIndexEntry(key.slice(2)));
    }
    // A write between the read and now (none can happen: appends to a stream are serialized) was added to neither.
    this.#entries ??= index;
    return this.#entries;
  }
}
