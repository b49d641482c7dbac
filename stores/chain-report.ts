/*
 * What a chain check reports, apart from the check (chain-check.ts): the store errors (store-errors.ts) carry a
 * report, and the check raises store errors, so in one file the two imported each other.
 */

/**
 * What a chain check found: `authenticated` (every record follows its predecessor and this machine's key wrote the
 * chain), `unauthenticated` (the records follow one another but this key did not write the chain from `seq` on:
 * copied from another machine, or rewritten by someone without the key), `broken` (from `seq` on the records are not
 * what the chain recorded: changed, inserted, deleted, moved or cut off) or `unchained` (written before the chain).
 */
export type ChainStatus = 'authenticated' | 'unauthenticated' | 'broken' | 'unchained';

/** The result of `EventStore.verifyChain`. */
export interface ChainReport {
  stream: string;
  /** The records checked: the stream's head (0 for a stream that does not exist). */
  head: number;
  status: ChainStatus;
  /**
   * The first record that carries a chain field: 1, or the first record appended after a stream written before the
   * chain was upgraded (its records before are covered from there on, together). Undefined when no record does.
   */
  chainedFrom?: number;
  /** The first record that is not authenticated (or where the chain breaks); undefined when `authenticated`. */
  seq?: number;
  /** What is wrong at `seq`, in words. */
  problem?: string;
  /** The head of the stream's seal when it has one that matches (the store vouches the stream had reached it). */
  sealedHead?: number;
  /** The id of the key the check used (this machine's), or undefined when the machine has none. */
  keyId?: string;
}
