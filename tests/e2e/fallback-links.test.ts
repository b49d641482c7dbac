import { randomBytes } from 'node:crypto';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('without bubblewrap the permission layer is the guard against link-following walks', () => {
  it('`grep -R` over a workspace holding a link out asks first (and nothing leaks); `grep -r` runs unasked', async () => {
    const root = await makeTempDir('rein-fallback-links-');
    try {
      const real = await realpath(root.path);
      const token = `SECRET${randomBytes(6).toString('hex')}`;
      await mkdir(join(real, 'outside'));
      await mkdir(join(real, 'ws'));
      await writeFile(join(real, 'outside', 'secret.txt'), `${token}\n`);
      await symlink(join(real, 'outside', 'secret.txt'), join(real, 'ws', 'evil'));
      const workspace = join(real, 'ws');
      const script = (command: string) => JSON.stringify({ turns: [{ text: 'Searching.', toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'Done.' }] });
      await writeFile(join(workspace, 'follow.json'), script('grep -R SECRET .'));
      await writeFile(join(workspace, 'plain.json'), script('grep -r SECRET .'));
      const follow = await runInProcess(['run', 'search', '--script', 'follow.json', '--sandbox', 'off'], { cwd: workspace });
      expect(follow.code, follow.stdout + follow.stderr).toBe(3);
      expect(follow.stdout).toContain('? bash grep -R SECRET .');
      expect(follow.stdout + follow.stderr).not.toContain(token);
      const plain = await runInProcess(['run', 'search', '--script', 'plain.json', '--sandbox', 'off'], { cwd: workspace });
      expect(plain.code, plain.stdout + plain.stderr).toBe(0);
      expect(plain.stdout).toContain('✓ bash grep -r SECRET .');
      expect(plain.stdout + plain.stderr).not.toContain(token);
    } finally {
      await root.remove();
    }
  });
});
