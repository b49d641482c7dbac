import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ListingCache, ListingEntry } from './event-store.js';

/** LevelDB table files: immutable, so their names say what they hold. */
const TABLE = /\.(ldb|sst)$/;
const WRITE_AHEAD = /\.log$/;

/**
 * What a stream's records are, as far as a listing needs it, without opening its database: the names of its table
 * files and the sizes of its write-ahead logs. An append grows a log; a flush or compaction changes the tables. An open
 * that writes nothing changes only the log's number and the manifest, which this leaves out, so it stays the same.
 */
export const contentSignature = async (directory: string): Promise<string> => {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 'missing';
  }
  const tables: string[] = [];
  const logs: number[] = [];
  for (const name of names) {
    if (TABLE.test(name)) tables.push(name);
    else if (WRITE_AHEAD.test(name)) logs.push((await stat(join(directory, name)).catch(() => undefined))?.size ?? -1);
  }
  return `${tables.sort().join(',')}|${logs.sort((left, right) => left - right).join(',')}`;
};

const CACHE_FILE = 'listing-cache.json';

/**
 * The LevelDB store's listing cache: `<root>/listing-cache.json`, one entry per stream with the content signature it
 * was computed at. Written atomically (a temporary file renamed over it); a read-only store keeps it in memory only.
 * Any number of processes may write it: an entry is only used while its stream's signature still matches.
 */
export const levelListingCache = (root: string, streamDirectory: (stream: string) => string, readOnly: boolean): ListingCache => {
  let memory: Record<string, ListingEntry> | undefined;
  return {
    signature: (stream) => contentSignature(streamDirectory(stream)),
    async load() {
      if (memory) return memory;
      const text = await readFile(join(root, CACHE_FILE), 'utf8').catch(() => undefined);
      try {
        const parsed: unknown = text === undefined ? {} : JSON.parse(text);
        memory = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, ListingEntry>) : {};
      } catch {
        memory = {};
      }
      return memory;
    },
    async save(entries) {
      memory = entries;
      if (readOnly) return;
      const temporary = join(root, `${CACHE_FILE}.${process.pid}.tmp`);
      await writeFile(temporary, JSON.stringify(entries));
      await rename(temporary, join(root, CACHE_FILE));
    },
  };
};
