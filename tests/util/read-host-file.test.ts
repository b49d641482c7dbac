import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostFileProblem, readHostFile, readHostTextIfPresent } from '../../src/util/read-regular-file.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('readHostFile: a host read never blocks and reads only regular files (trial 6 F7)', () => {
  it('tells a regular file, a FIFO, a folder, a too-large file, a missing one and a refused link apart', async () => {
    const dir = await makeTempDir('rein-host-file-');
    try {
      await writeFile(join(dir.path, 'a.json'), '{"x":1}');
      execFileSync('mkfifo', [join(dir.path, 'pipe')]);
      await mkdir(join(dir.path, 'folder'));
      await symlink('a.json', join(dir.path, 'link'));
      const ok = await readHostFile(join(dir.path, 'a.json'));
      expect(ok.ok && ok.bytes.toString()).toBe('{"x":1}');
      const fifo = await readHostFile(join(dir.path, 'pipe'));
      expect(fifo).toEqual({ ok: false, reason: 'not_a_file', kind: 'a FIFO' });
      expect(hostFileProblem('pipe', fifo as Exclude<typeof fifo, { ok: true }>)).toBe('pipe is not a regular file (a FIFO)');
      expect(await readHostFile(join(dir.path, 'folder'))).toEqual({ ok: false, reason: 'not_a_file', kind: 'a folder' });
      expect(await readHostFile(join(dir.path, 'a.json'), { maxBytes: 3 })).toEqual({ ok: false, reason: 'too_large', size: 7, limit: 3 });
      expect(await readHostFile(join(dir.path, 'nothing'))).toMatchObject({ ok: false, reason: 'missing' });
      expect(await readHostFile(join(dir.path, 'link'), { noFollow: true })).toMatchObject({ ok: false, reason: 'unreadable', detail: 'ELOOP' });
      expect(await readHostTextIfPresent(join(dir.path, 'nothing'), 'nothing', (message) => new Error(message))).toBeUndefined();
      await expect(readHostTextIfPresent(join(dir.path, 'pipe'), 'pipe', (message) => new Error(message))).rejects.toThrow('pipe is not a regular file (a FIFO)');
    } finally {
      await dir.remove();
    }
  });
});
