import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { RECORD_KEYS, blobKey, keySeq, recordKey } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { WATERMARK_FILE } from '../../stores/level-stream-integrity.js';
import { decodeStoredValue, encodeChainedGroups } from '../../stores/record-groups.js';
import type { ChainEntry } from './chain-forgery.js';

/*
 * A LevelDB stream's records and chain fields read and rewritten around the store, with classic-level alone: what
 * someone with write access to the store directory but without the chain key can do. The store must not hold the
 * stream's database meanwhile (close it, or `release` the stream).
 */

const open = async (root: string, stream: string): Promise<ClassicLevel<string, Uint8Array>> => {
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  return database;
};

/** Every stored record of the stream with its chain field (long strings kept in blobs are not put back). */
export const levelRawChain = async (root: string, stream: string): Promise<ChainEntry[]> => {
  const database = await open(root, stream);
  try {
    const entries: ChainEntry[] = [];
    for (const [key, value] of await database.iterator(RECORD_KEYS).all()) {
      for (const { record, field } of decodeStoredValue(value, stream, keySeq(key)!)) entries.push({ record, field });
    }
    return entries;
  } finally {
    await database.close();
  }
};

/**
 * Replaces the stream's records with `entries` as they are (fields included; groups re-encoded, checksums right), and
 * with `dropSeal` deletes the clean-close watermark that holds the seal.
 */
export const levelForge = async (root: string, stream: string, entries: readonly ChainEntry[], options: { dropSeal?: boolean } = {}): Promise<void> => {
  const database = await open(root, stream);
  try {
    const old = await database.keys(RECORD_KEYS).all();
    const groups = await encodeChainedGroups(entries.map((entry) => entry.record), entries.map((entry) => entry.field));
    await database.batch(
      [
        ...old.map((key) => ({ type: 'del' as const, key })),
        ...groups.map((group) => ({ type: 'put' as const, key: recordKey(group.lastSeq), value: group.value })),
        ...groups.flatMap((group) => group.blobs.map((blob) => ({ type: 'put' as const, key: blobKey(blob.hex), value: blob.bytes }))),
      ],
      { sync: true },
    );
  } finally {
    await database.close();
  }
  if (options.dropSeal) await rm(join(root, 'streams', stream, WATERMARK_FILE), { force: true });
};
