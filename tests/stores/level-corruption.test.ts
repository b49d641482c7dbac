import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { draft, temporaryDirectory } from './store-test-support.js';

/** Every LevelDB table file below `root`. */
const tablesBelow = async (root: string): Promise<string[]> =>
  (await readdir(root, { recursive: true })).filter((name) => name.endsWith('.ldb')).map((name) => join(root, name));

describe('a LevelDB table damaged on disk', () => {
  const directories: Array<{ remove(): Promise<void> }> = [];
  afterEach(async () => {
    for (const directory of directories.splice(0)) await directory.remove();
  });

  it('is STORE_CORRUPT_RECORD when a read meets it, never a raw LEVEL_* error', async () => {
    const directory = await temporaryDirectory('rein-level-corrupt-');
    directories.push(directory);
    const store = await openLevelEventStore(directory.path);
    // Compressible records, so LevelDB stores them in snappy blocks; two opens move them from the log into tables.
    for (let head = 0; head < 400; head += 20) {
      await store.append('s', Array.from({ length: 20 }, (_, offset) => draft(head + offset + 1, { data: { text: 'abcdefgh'.repeat(200) } })), { expectedSeq: head });
    }
    await store.close();
    const reopened = await openLevelEventStore(directory.path);
    expect(await reopened.head('s')).toBe(400);
    await reopened.close();
    const tables = await tablesBelow(directory.path);
    expect(tables.length).toBeGreaterThan(0);
    for (const table of tables) {
      const bytes = await readFile(table);
      for (let index = 64; index < bytes.length / 2; index += 7) bytes[index] = bytes[index]! ^ 0x5a;
      await writeFile(table, bytes);
    }
    const damaged = await openLevelEventStore(directory.path);
    try {
      const failure = await damaged.read('s').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'STORE_CORRUPT_RECORD' });
      expect(String((failure as Error).message)).toContain('s');
    } finally {
      await damaged.close().catch(() => undefined);
    }
  });
});
