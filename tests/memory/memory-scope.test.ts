import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveMemoryScope } from '../../src/memory/memory-scope.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('resolveMemoryScope', () => {
  it('reads the repository and branch from .git, a .git pointer file included', async () => {
    const dir = await makeTempDir('rein-scope-');
    try {
      await mkdir(join(dir.path, '.git'));
      await writeFile(join(dir.path, '.git', 'HEAD'), 'ref: refs/heads/feature/x\n');
      await mkdir(join(dir.path, 'sub'));
      expect(await resolveMemoryScope(join(dir.path, 'sub'))).toMatchObject({ repo: dir.path, branch: 'feature/x' });
      await mkdir(join(dir.path, 'wt'));
      await mkdir(join(dir.path, 'gitdir-of-wt'));
      await writeFile(join(dir.path, 'gitdir-of-wt', 'HEAD'), 'ref: refs/heads/other\n');
      await writeFile(join(dir.path, 'wt', '.git'), 'gitdir: ../gitdir-of-wt\n');
      expect(await resolveMemoryScope(join(dir.path, 'wt'))).toMatchObject({ repo: join(dir.path, 'wt'), branch: 'other' });
    } finally {
      await dir.remove();
    }
  });

  it('a FIFO at .git/HEAD or at a .git pointer (one command can make it) reads as no branch instead of hanging every later run', async () => {
    const dir = await makeTempDir('rein-scope-');
    try {
      await mkdir(join(dir.path, 'a', '.git'), { recursive: true });
      execFileSync('mkfifo', [join(dir.path, 'a', '.git', 'HEAD')]);
      const scope = await resolveMemoryScope(join(dir.path, 'a'));
      expect(scope).toMatchObject({ repo: join(dir.path, 'a') });
      expect(scope.branch).toBeUndefined();
      await mkdir(join(dir.path, 'b'));
      execFileSync('mkfifo', [join(dir.path, 'b', '.git')]);
      expect((await resolveMemoryScope(join(dir.path, 'b'))).branch).toBeUndefined();
    } finally {
      await dir.remove();
    }
  }, 20_000);
});
