import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('what the README has a user make in the clone', () => {
  it('the demo directory `npm start -- <dir>` keeps and the `npm pack` tarball leave the clone clean (ignored by git)', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const dir = /npm start -- (\S+)/.exec(readme)?.[1];
    expect(dir, 'the README gives the demo a directory').toBeDefined();
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    // `git check-ignore` exits 1 (throws) for a path nothing ignores.
    const ignored = execFileSync('git', ['check-ignore', '--no-index', `${dir}/package.json`, `rein-${version}.tgz`], { cwd: root, encoding: 'utf8' });
    expect(ignored.trim().split('\n')).toEqual([`${dir}/package.json`, `rein-${version}.tgz`]);
  });
});
