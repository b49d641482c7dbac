import { firstValueFrom } from 'rxjs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { hashTree } from '../support/tree-hash.js';
import { makeTempDir } from '../support/temp-dir.js';

const draft = (index: number) => ({ id: `r${index}`, type: 'user.message', v: 1, at: index, actor: 'root', data: { text: `m${index}` } });

describe('a read-only LevelDB store', () => {
  it('reads everything, refuses every write with STORE_READ_ONLY, and leaves the directory byte-identical', async () => {
    const directory = await makeTempDir('rein-ro-');
    const root = join(directory.path, '.rein');
    try {
      const writer = await openLevelEventStore(root);
      await writer.append('s1', [draft(1), draft(2), draft(3)], { expectedSeq: 0 });
      await writer.saveSnapshot('s1', { seq: 2, version: '1', at: 1, data: { x: 1 } });
      const blob = await writer.blobs.put('blob text');
      await writer.close();
      const before = await hashTree(root);

      const reader = await openLevelEventStore(root, { readOnly: true });
      expect((await reader.read('s1')).map((record) => record.seq)).toEqual([1, 2, 3]);
      expect(await reader.head('s1')).toBe(3);
      expect((await reader.streams()).map((info) => info.stream)).toEqual(['s1']);
      expect(await reader.loadSnapshot('s1')).toMatchObject({ seq: 2 });
      expect((await firstValueFrom(reader.tail('s1', 3))).seq).toBe(3);
      expect(Buffer.from(await reader.blobs.get(blob)).toString()).toBe('blob text');
      expect(await reader.read('missing')).toEqual([]);
      await expect(reader.append('s1', [draft(4)], { expectedSeq: 3 })).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
      await expect(reader.fork('s1', 2)).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
      await expect(reader.saveSnapshot('s1', { seq: 3, version: '1', at: 1, data: {} })).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
      await reader.close();
      expect(await hashTree(root)).toEqual(before);

      const owner = await openLevelEventStore(root);
      await owner.append('s1', [draft(4)], { expectedSeq: 3 });
      const whileHeld = await openLevelEventStore(root, { readOnly: true });
      expect(await whileHeld.head('s1')).toBe(4);
      await whileHeld.close();
      await owner.close();
    } finally {
      await directory.remove();
    }
  });
});
