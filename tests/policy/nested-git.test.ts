import { execFileSync } from 'node:child_process';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitControlPaths } from '../../src/policy/protected-paths.js';
import { toolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

/* Issue 30 E: a repository checked out inside the workspace has its git configuration and hooks protected like the workspace's own. */
describe('a nested .git', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let root: string;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-nested-git-');
    root = await realpath(workspace.path);
    execFileSync('git', ['init', '-q', root]);
    await mkdir(join(root, 'vendor'), { recursive: true });
    execFileSync('git', ['init', '-q', join(root, 'vendor', 'lib')]);
  });
  afterEach(() => workspace.remove());

  it('is among the protected git control paths, and file tools may read its config but never write it or its hooks', async () => {
    const paths = gitControlPaths(root);
    for (const name of ['config', 'hooks']) {
      expect(paths).toContain(join(root, '.git', name));
      expect(paths).toContain(join(root, 'vendor', 'lib', '.git', name));
    }
    const harness = await toolHarness(root);
    const config = join(root, 'vendor', 'lib', '.git', 'config');
    const before = await readFile(config, 'utf8');
    expect((await harness.run('read', { path: 'vendor/lib/.git/config' })).status).toBe('ok');
    expect((await harness.run('write', { path: 'vendor/lib/.git/config', content: '[core]\n\tfsmonitor = "touch pwned"\n' })).errorCode).toBe('Denied');
    expect((await harness.run('write', { path: 'vendor/lib/.git/hooks/pre-commit', content: '#!/bin/sh\ntouch pwned\n' })).errorCode).toBe('Denied');
    expect(await readFile(config, 'utf8')).toBe(before);
    // Ordinary files of the nested checkout stay writable.
    expect((await harness.run('write', { path: 'vendor/lib/readme.txt', content: 'ok\n' })).status).toBe('ok');
  });

  it('is found below the workspace whether or not the workspace is a repository itself; dependencies are not walked', async () => {
    const plain = await makeTempDir('rein-nested-plain-');
    try {
      const top = await realpath(plain.path);
      execFileSync('git', ['init', '-q', join(top, 'a', 'b', 'c')]);
      await mkdir(join(top, 'node_modules', 'x'), { recursive: true });
      execFileSync('git', ['init', '-q', join(top, 'node_modules', 'x')]);
      await writeFile(join(top, 'file.txt'), 'x');
      const paths = gitControlPaths(top);
      expect(paths).toContain(join(top, 'a', 'b', 'c', '.git', 'config'));
      expect(paths.some((path) => path.includes('node_modules'))).toBe(false);
    } finally {
      await plain.remove();
    }
  });
});
