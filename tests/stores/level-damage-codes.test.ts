import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { artifactRef, blake3Hex } from '../../stores/blob-hash.js';
import { blobKey } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { draft, temporaryDirectory } from './store-test-support.js';

const tablesBelow = async (root: string): Promise<string[]> =>
  (await readdir(root, { recursive: true })).filter((name) => name.endsWith('.ldb')).map((name) => join(root, name));

describe('damage in a LevelDB stream is said in rein’s codes (trial 6 F8)', () => {
  const directories: Array<{ remove(): Promise<void> }> = [];
  afterEach(async () => {
    for (const directory of directories.splice(0)) await directory.remove();
  });

  it('a table damaged where opening the stream reads it (meta key, last record key) is STORE_CORRUPT_RECORD, never LEVEL_CORRUPTION', async () => {
    const directory = await temporaryDirectory('rein-level-open-corrupt-');
    directories.push(directory);
    const store = await openLevelEventStore(directory.path);
    await store.append('s', Array.from({ length: 40 }, (_, offset) => draft(offset + 1, { data: { text: 'abcdefgh'.repeat(200) } })), { expectedSeq: 0 });
    await store.close();
    const reopened = await openLevelEventStore(directory.path);
    expect(await reopened.head('s')).toBe(40);
    await reopened.close();
    const tables = await tablesBelow(directory.path);
    expect(tables.length).toBeGreaterThan(0);
    // Every block damaged: the first read of the stream (at open) meets it.
    for (const table of tables) {
      const bytes = await readFile(table);
      for (let index = 64; index < bytes.length - 64; index += 7) bytes[index] = bytes[index]! ^ 0x5a;
      await writeFile(table, bytes);
    }
    const damaged = await openLevelEventStore(directory.path);
    try {
      for (const operation of [() => damaged.read('s'), () => damaged.head('s'), () => damaged.info('s')]) {
        const failure = await operation().then(() => undefined, (error: unknown) => error);
        expect(failure).toMatchObject({ code: 'STORE_CORRUPT_RECORD', message: expect.stringContaining('corrupt record in s') });
      }
    } finally {
      await damaged.close().catch(() => undefined);
    }
  });

  it('a stream blob whose key a damaged block garbled is BLOB_CORRUPT; one that is simply absent stays BLOB_NOT_FOUND', async () => {
    const directory = await temporaryDirectory('rein-level-blob-garbled-');
    directories.push(directory);
    const store = await openLevelEventStore(directory.path);
    const blob = 'the exact model input of turn 3 '.repeat(50);
    await store.append('s', [draft(1)], { expectedSeq: 0, blobs: [blob] });
    const hex = await blake3Hex(Buffer.from(blob, 'utf8'));
    await store.close();
    // What an unverified damaged block hands back: the value under a key with garbled bytes in it.
    const database = new ClassicLevel<string, Uint8Array>(join(directory.path, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const value = (await database.get(blobKey(hex)))!;
    await database.batch([{ type: 'del', key: blobKey(hex) }, { type: 'put', key: `b!${hex.slice(0, 4)}\u00c6\u00cb\u00ca${hex.slice(7)}`, value }]);
    await database.close();
    const damaged = await openLevelEventStore(directory.path);
    try {
      await expect(damaged.readBlob('s', artifactRef(hex))).rejects.toMatchObject({ code: 'BLOB_CORRUPT', message: expect.stringContaining('holds a garbled key') });
      await expect(damaged.readBlob('s', artifactRef('0'.repeat(64)))).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    } finally {
      await damaged.close();
    }
    // The same stream without the garbled key: the blob is absent, not damaged.
    const healthy = new ClassicLevel<string, Uint8Array>(join(directory.path, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await healthy.open();
    for await (const key of healthy.keys()) if (key.startsWith('b!')) await healthy.del(key);
    await healthy.close();
    const absent = await openLevelEventStore(directory.path);
    try {
      await expect(absent.readBlob('s', artifactRef(hex))).rejects.toMatchObject({ code: 'BLOB_NOT_FOUND' });
    } finally {
      await absent.close();
    }
  });
});
