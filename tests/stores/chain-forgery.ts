import type { RecordEnvelope } from '../../models/envelope.js';
import { canonicalRecordBytes } from '../../stores/chain-canon.js';
import { LINK_BYTES, recordDigest } from '../../stores/chain-crypto.js';
import { CHAIN_ORIGIN } from '../../stores/chain.js';

/**
 * Forgeries of a stream as someone with write access to the storage but without the chain key would make them: the
 * records and their stored chain fields, edited by hand. Each edit returns a new list; `relinkFrom` then recomputes
 * the keyless links (the attacker read the source), leaving the MACs they cannot compute as they were. (The chain's
 * hasher must be loaded: `await loadChainHashing()`, which any store operation that chains has done.)
 */

/** A stored record and its chain field (undefined: none). */
export interface ChainEntry {
  record: RecordEnvelope;
  field: Uint8Array | undefined;
}

/** Seqs 1..n in order again (a record moved or removed renumbers the ones after it, as a forger must to keep a readable log). */
const renumber = (entries: readonly ChainEntry[]): ChainEntry[] => entries.map((entry, index) => ({ ...entry, record: { ...entry.record, seq: index + 1 } }));

/** Record `index` (0-based) with its data replaced; its stored field kept. */
export const changeRecord = (entries: readonly ChainEntry[], index: number, data: unknown): ChainEntry[] => entries.map((entry, at) => (at === index ? { ...entry, record: { ...entry.record, data } } : entry));

/** Record `index` removed, the ones after it renumbered. */
export const deleteRecord = (entries: readonly ChainEntry[], index: number): ChainEntry[] => renumber(entries.filter((_, at) => at !== index));

/** Records `index` and `index + 1` exchanged (renumbered). */
export const swapRecords = (entries: readonly ChainEntry[], index: number): ChainEntry[] => {
  const swapped = [...entries];
  [swapped[index], swapped[index + 1]] = [swapped[index + 1]!, swapped[index]!];
  return renumber(swapped);
};

/** `record` inserted before `index` (renumbered), carrying a copy of its new predecessor's field as its own. */
export const insertRecord = (entries: readonly ChainEntry[], index: number, record: Omit<RecordEnvelope, 'seq'>): ChainEntry[] => {
  const inserted = [...entries];
  inserted.splice(index, 0, { record: { ...record, seq: 0 } as RecordEnvelope, field: entries[Math.max(0, index - 1)]?.field?.slice() });
  return renumber(inserted);
};

/** The last `count` records cut off. */
export const truncate = (entries: readonly ChainEntry[], count: number): ChainEntry[] => entries.slice(0, entries.length - count);

/**
 * Every link from record `index` on recomputed from the records as they now are (keyless: anyone can), the MAC bytes
 * kept: the chain then reads intact, and only the key can tell it was not written by the store.
 */
export const relinkFrom = (entries: readonly ChainEntry[], index: number): ChainEntry[] => {
  let predecessor: Uint8Array = CHAIN_ORIGIN;
  return entries.map((entry, at) => {
    const digest = recordDigest(predecessor, canonicalRecordBytes(entry.record));
    let field = entry.field;
    if (at >= index && field !== undefined) {
      field = field.slice();
      field.set(digest.subarray(0, LINK_BYTES), 0);
    }
    predecessor = field ?? digest;
    return { ...entry, field };
  });
};
