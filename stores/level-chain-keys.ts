/*
 * The chain key a LevelDB store signs and checks with: the one it was given, else this machine's, loaded once on first
 * need (and created then by a store that writes). Split from level-event-store.ts (issue 31).
 */
import type { ChainKey } from './chain-crypto.js';
import { loadChainKey } from './chain-key-file.js';
import { StoreError } from './store-errors.js';

/** Loads a store's chain key on first need; see `LevelEventStoreOptions.chainKey`. */
export class LevelChainKeys {
  /** The chain key, loaded on first need. */
  #chainKey: Promise<ChainKey | undefined> | undefined;
  readonly #givenChainKey: ChainKey | undefined;
  readonly #readOnly: boolean;

  constructor(options: { given: ChainKey | undefined; readOnly: boolean }) {
    this.#givenChainKey = options.given;
    this.#readOnly = options.readOnly;
  }

  /** The writer's key once loaded (or given): an append need not await it. */
  #known: ChainKey | undefined;

  /** The writer's key when already known (given, or loaded by an earlier `writerKey`), else undefined. */
  knownWriterKey(): ChainKey | undefined {
    return this.#givenChainKey ?? this.#known;
  }

  /** The chain key for a writer: the given one, else this machine's, created if it has none (`CHAIN_KEY_UNAVAILABLE` when it cannot be). */
  async writerKey(): Promise<ChainKey> {
    const key = await this.readerKey();
    if (key === undefined) throw new StoreError('CHAIN_KEY_UNAVAILABLE', 'no chain key');
    return (this.#known = key);
  }

  /** The chain key: the given one, else this machine's (a read-only store never creates it: undefined when there is none). */
  readerKey(): Promise<ChainKey | undefined> {
    if (this.#givenChainKey !== undefined) return Promise.resolve(this.#givenChainKey);
    if (this.#chainKey === undefined) {
      const loading = loadChainKey({ create: !this.#readOnly });
      this.#chainKey = loading;
      // A failed load is tried again by the next operation (a key file fixed meanwhile).
      loading.catch(() => {
        if (this.#chainKey === loading) this.#chainKey = undefined;
      });
    }
    return this.#chainKey;
  }
}
