import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { readManifestTables } from '../../stores/level-manifest.js';
import { hashTree } from '../support/tree-hash.js';
import { makeTempDir } from '../support/temp-dir.js';

const builtStoreUrl = new URL('../../dist/stores/index.js', import.meta.url).href;

/** A record whose text does not compress, so a few dozen of them make megabytes of LevelDB tables. */
const bulky = (index: number, bytes: number) => ({ id: `r${index}`, type: 'user.message', v: 1, at: index, actor: 'root', data: { text: randomBytes(bytes).toString('base64') } });

/** A stream with over 4 MiB of live tables (so reads link them) and a log of a few hundred KiB after them. */
const writeLargeStream = async (root: string, stream: string): Promise<void> => {
  let head = 0;
  // The last three records by a second writer: a close after less than 256 KiB leaves the log as it is (a larger
  // one is folded into a table).
  for (const [from, to] of [[0, 87], [87, 90]] as const) {
    const writer = await openLevelEventStore(root);
    for (let index = from; index < to; index++) head = (await writer.append(stream, [bulky(index + 1, 60_000)], { expectedSeq: head })).at(-1)!.seq;
    await writer.close();
  }
};

const tableFiles = async (directory: string): Promise<string[]> => (await readdir(directory)).filter((name) => /^\d+\.(ldb|sst)$/.test(name)).sort();

/** The copies a process left, by the pid in their names, in the places copies go. */
const copiesOf = async (pid: number): Promise<string[]> => {
  const found: string[] = [];
  for (const place of ['/dev/shm', tmpdir()]) {
    const names = await readdir(place).catch(() => [] as string[]);
    found.push(...names.filter((name) => name.startsWith(`rein-stream-copy-${pid}-`)).map((name) => join(place, name)));
  }
  return found;
};

describe('read-only copies of stream databases', () => {
  it('the manifest reader names the tables LevelDB keeps, all below the next file number', async () => {
    /** A database written with `puts` values of 30 KB over `keys` keys and closed (then, with `reopen`, opened and closed again). */
    const written = async (puts: number, keys: number, reopen: boolean) => {
      const directory = await makeTempDir('rein-manifest-');
      const database = new ClassicLevel<string, Uint8Array>(directory.path, { keyEncoding: 'utf8', valueEncoding: 'view', writeBufferSize: 256 * 1024 });
      await database.open();
      for (let index = 0; index < puts; index++) await database.put(`k${String(index % keys).padStart(4, '0')}`, randomBytes(30_000));
      // A compaction runs to its end: the manifest gets edits that delete the tables it merged.
      if (!reopen) await database.compactRange('k', 'l');
      await database.close();
      if (reopen) {
        // A second open recovers the log into a table and writes a fresh manifest (one edit listing the live tables).
        await database.open();
        await database.close();
      }
      const manifest = (await readFile(join(directory.path, 'CURRENT'), 'utf8')).trim();
      const bytes = await readFile(join(directory.path, manifest));
      const onDisk = (await tableFiles(directory.path)).map((name) => Number(name.split('.')[0]));
      await directory.remove();
      return { tables: readManifestTables(bytes), onDisk, bytes };
    };
    // Three tables, too few for a compaction: the manifest's live set is exactly what is on disk.
    const small = await written(20, 20, true);
    expect(small.onDisk.length).toBeGreaterThan(0);
    expect([...small.tables!.live].sort((left, right) => left - right)).toEqual(small.onDisk);
    // The manifest of a run with flushes and compactions (so edits that delete tables): every live table is on disk,
    // none at or above the next number. (A compaction the close cut short can leave an unlisted table behind, which
    // the next open deletes; obsolete tables are deleted as each compaction ends.)
    const compacted = await written(120, 70, false);
    expect(compacted.tables!.live.size).toBeGreaterThan(0);
    for (const number of compacted.tables!.live) {
      expect(compacted.onDisk).toContain(number);
      expect(number).toBeLessThan(compacted.tables!.nextFileNumber);
    }
    // A damaged record is not guessed at: the reader gives up and the caller copies whole.
    compacted.bytes[10]! ^= 0xff;
    expect(readManifestTables(compacted.bytes)).toBeUndefined();
  });

  it('a large stream is read through hard-linked tables, and its files stay byte-identical, a damaged log included', async () => {
    const directory = await makeTempDir('rein-linked-');
    const root = join(directory.path, '.rein');
    const streamDirectory = join(root, 'streams', 's1');
    try {
      await writeLargeStream(root, 's1');
      const tables = await tableFiles(streamDirectory);
      const tableBytes = (await Promise.all(tables.map(async (name) => (await stat(join(streamDirectory, name))).size))).reduce((sum, size) => sum + size, 0);
      expect(tableBytes).toBeGreaterThan(4 * 1024 * 1024);
      const before = await hashTree(root);

      const reader = await openLevelEventStore(root, { readOnly: true });
      expect((await reader.read('s1')).length).toBe(90);
      // The copy the reader keeps open shares the tables' inodes: they were linked, not copied.
      const links = await Promise.all(tables.map(async (name) => (await stat(join(streamDirectory, name))).nlink));
      expect(links.some((count) => count === 2)).toBe(true);
      await reader.close();
      for (const name of tables) expect((await stat(join(streamDirectory, name))).nlink).toBe(1);
      expect(await hashTree(root)).toEqual(before);

      // Damage the log (40 bytes XORed): the read fails loudly and the source is left exactly as it was.
      const log = (await readdir(streamDirectory)).find((name) => name.endsWith('.log'))!;
      const size = (await stat(join(streamDirectory, log))).size;
      expect(size).toBeGreaterThan(20_000);
      const file = await open(join(streamDirectory, log), 'r+');
      const bytes = Buffer.alloc(40);
      await file.read(bytes, 0, 40, Math.floor(size / 2));
      for (let index = 0; index < bytes.length; index++) bytes[index]! ^= 0xff;
      await file.write(bytes, 0, 40, Math.floor(size / 2));
      await file.close();
      const damaged = await hashTree(root);
      const again = await openLevelEventStore(root, { readOnly: true });
      await expect(again.read('s1')).rejects.toMatchObject({ code: 'STORE_CORRUPT_RECORD' });
      await again.close();
      expect(await hashTree(root)).toEqual(damaged);
      expect(existsSync(join(root, '.read-copies'))).toBe(false);
    } finally {
      await directory.remove();
    }
  });

  it('copies left by a reader killed with SIGKILL are deleted by the next reader', async () => {
    const directory = await makeTempDir('rein-killed-reader-');
    const root = join(directory.path, '.rein');
    try {
      const writer = await openLevelEventStore(root);
      await writer.append('small', [bulky(1, 100)], { expectedSeq: 0 });
      await writer.close();
      await writeLargeStream(root, 'large');
      const readerScript = (hang: boolean) => `
        const { openLevelEventStore } = await import(${JSON.stringify(builtStoreUrl)});
        const store = await openLevelEventStore(${JSON.stringify(root)}, { readOnly: true });
        await store.read('small');
        await store.read('large');
        process.stdout.write('read\\n');
        if (${hang}) setInterval(() => {}, 1000); else await store.close();
      `;
      const killed = spawn(process.execPath, ['--input-type=module', '-e', readerScript(true)], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        killed.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('read') && resolve());
        killed.on('exit', (code) => reject(new Error(`the reader exited early (${String(code)})`)));
      });
      const exited = new Promise((resolve) => killed.on('exit', resolve));
      killed.kill('SIGKILL');
      await exited;
      const left = await copiesOf(killed.pid!);
      expect(left).toHaveLength(2);

      const next = spawn(process.execPath, ['--input-type=module', '-e', readerScript(false)], { stdio: ['ignore', 'pipe', 'inherit'] });
      expect(await new Promise((resolve) => next.on('exit', resolve))).toBe(0);
      expect(await copiesOf(killed.pid!)).toEqual([]);
      expect(await copiesOf(next.pid!)).toEqual([]);
    } finally {
      await directory.remove();
    }
  });
});
